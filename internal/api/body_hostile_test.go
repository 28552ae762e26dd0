package api_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// chatMessage is the message of an OpenAI-shaped error answer, "" when the
// answer is not one.
func chatMessage(r reply) (code, message string) {
	e, _ := r.body["error"].(map[string]any)
	code, _ = e["code"].(string)
	message, _ = e["message"].(string)
	return code, message
}

// A body that starts with a UTF-8 byte-order mark was refused with
// "invalid character 'ï' looking for beginning of value at byte 1", which
// names a character the caller did not write. The refusal names the mark and
// how to send the body instead, on both endpoints; nothing is stored. Found
// by review.
func TestBodyWithByteOrderMark(t *testing.T) {
	b := setup(t, options{})
	const bom = "\xEF\xBB\xBF"
	const want = "the body starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"

	r := b.create(t, acmeKey, "bom-1", bom+triageBody("Cannot log in"))
	if detail, _ := r.body["detail"].(string); r.status != http.StatusBadRequest || !strings.HasSuffix(r.body["type"].(string), "invalid-encoding") ||
		!strings.Contains(detail, want) {
		t.Fatalf("job with a byte-order mark: %d %s", r.status, r.raw)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, bom+`{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	if code, msg := chatMessage(r); r.status != http.StatusBadRequest || code != "invalid_encoding" || !strings.Contains(msg, want) {
		t.Fatalf("chat with a byte-order mark: %d %s", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
	// The same body without the mark is taken: the key was not bound.
	if r := b.create(t, acmeKey, "bom-1", triageBody("Cannot log in")); r.status != http.StatusCreated && r.status != http.StatusAccepted {
		t.Fatalf("the same job without the mark: %d %s", r.status, r.raw)
	}
}

// A body sent compressed (Content-Encoding: gzip) was read as it came and
// refused as "not valid UTF-8", which says nothing of the compression. The
// router takes bodies uncompressed: such a request is refused before its
// body is decoded, 415 (RFC 9110 §15.5.16) with Accept-Encoding: identity
// (RFC 7694), saying to send the body uncompressed. Content-Encoding:
// identity is no compression and is taken. Found by review.
func TestCompressedBodyRefused(t *testing.T) {
	b := setup(t, options{})
	gz := func(s string) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return buf.String()
	}
	const want = "request bodies must be sent uncompressed"
	for _, enc := range []string{"gzip", "br", "deflate", "identity, gzip"} {
		r := b.create(t, acmeKey, "gz-"+enc, gz(triageBody("Cannot log in")), "Content-Encoding", enc)
		if detail, _ := r.body["detail"].(string); r.status != http.StatusUnsupportedMediaType ||
			!strings.HasSuffix(r.body["type"].(string), "unsupported-content-encoding") || !strings.Contains(detail, want) ||
			r.header.Get("Accept-Encoding") != "identity" {
			t.Fatalf("job sent with Content-Encoding %s: %d (Accept-Encoding %q) %s", enc, r.status, r.header.Get("Accept-Encoding"), r.raw)
		}
		r = b.do(t, "POST", "/v1/chat/completions", acmeKey, gz(`{"model":"default","messages":[{"role":"user","content":"hi"}]}`), "Content-Encoding", enc)
		if code, msg := chatMessage(r); r.status != http.StatusUnsupportedMediaType || code != "unsupported_content_encoding" ||
			!strings.Contains(msg, want) || r.header.Get("Accept-Encoding") != "identity" {
			t.Fatalf("chat sent with Content-Encoding %s: %d %s", enc, r.status, r.raw)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
	if r := b.create(t, acmeKey, "gz-identity", triageBody("Cannot log in"), "Content-Encoding", "identity"); r.status != http.StatusCreated && r.status != http.StatusAccepted {
		t.Fatalf("job sent with Content-Encoding identity: %d %s", r.status, r.raw)
	}
}

// JSON nested deeper than encoding/json's 10000 levels was refused with
// "invalid character '[' exceeded max depth", which does not say what the
// limit is. The refusal says the body is nested deeper than 10000 levels, on
// both endpoints. Found by review.
func TestDeeplyNestedBody(t *testing.T) {
	b := setup(t, options{})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	const want = "nested deeper than 10000 levels"
	r := b.create(t, acmeKey, "deep-1", `{"prompt":"triage","input":{"subject":"x","body":"y","deep":`+deep+`}}`)
	if detail, _ := r.body["detail"].(string); r.status != http.StatusBadRequest || !strings.HasSuffix(r.body["type"].(string), "invalid-json") ||
		!strings.Contains(detail, want) {
		t.Fatalf("job nested 10001 levels deep: %d %.300s", r.status, r.raw)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}],"metadata":`+deep+`}`)
	if code, msg := chatMessage(r); r.status != http.StatusBadRequest || code != "invalid_json" || !strings.Contains(msg, want) {
		t.Fatalf("chat nested 10001 levels deep: %d %.300s", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
}
