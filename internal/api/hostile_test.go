package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A caller's response_format.json_schema loads nothing: a $ref to a file that
// exists and to one that does not answer the same 400, never quoting the file.
func TestChatSchemaExternalRefRefused(t *testing.T) {
	b := setup(t, options{})
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`"TOPSECRET"`), 0o600); err != nil {
		t.Fatal(err)
	}
	body := func(ref string) string {
		return `{"model":"default","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",` +
			`"json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}}}}`
	}
	var messages []string
	for _, ref := range []string{"file:///etc/hostname", "file://" + secret, "file://" + filepath.Join(dir, "missing.json"), "other.json"} {
		r := b.do(t, "POST", "/v1/chat/completions", acmeKey, body(ref))
		if r.status != http.StatusBadRequest {
			t.Fatalf("$ref %s: status %d, want 400: %s", ref, r.status, r.raw)
		}
		e, _ := r.body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, "external references are not allowed") {
			t.Fatalf("$ref %s: message %q does not say external references are not allowed", ref, msg)
		}
		if strings.Contains(msg, "TOPSECRET") || strings.Contains(msg, "no such file") || strings.Contains(msg, dir) {
			t.Fatalf("$ref %s: message leaks the file system: %q", ref, msg)
		}
		messages = append(messages, msg)
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Fatalf("answers differ by target (an oracle): %q vs %q", messages[0], m)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
}

// Bodies that are not valid UTF-8 are a 400 naming the problem, on both
// endpoints, and nothing is stored.
func TestInvalidUTF8Is400(t *testing.T) {
	b := setup(t, options{})
	bad := "\xff\xfe"
	r := b.create(t, acmeKey, "utf8-1", `{"prompt":"triage","input":{"subject":"`+bad+`","body":"I cannot log in since yesterday."}}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body["detail"].(string), "UTF-8") ||
		!strings.HasSuffix(r.body["type"].(string), "invalid-encoding") {
		t.Fatalf("job with invalid UTF-8: %d %s", r.status, r.raw)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f`+bad+`"}}]}`)
	e, _ := r.body["error"].(map[string]any)
	if r.status != http.StatusBadRequest || e == nil || !strings.Contains(e["message"].(string), "UTF-8") {
		t.Fatalf("chat with invalid UTF-8: %d %s", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
}

// JSON escapes the database cannot store (NUL, lone surrogates) are a 400 too;
// a proper surrogate pair is accepted.
func TestUnstorableEscapesAre400(t *testing.T) {
	b := setup(t, options{})
	for i, esc := range []string{`\u0000`, `\ud800`, `\udc00x`, `\ud800\u0041`} {
		key := "esc-" + string(rune('a'+i))
		r := b.create(t, acmeKey, key, `{"prompt":"triage","input":{"subject":"a`+esc+`b","body":"I cannot log in since yesterday."}}`)
		if r.status != http.StatusBadRequest || !strings.HasSuffix(r.body["type"].(string), "invalid-encoding") {
			t.Fatalf("job with %s: %d %s", esc, r.status, r.raw)
		}
		r = b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi`+esc+`"}]}`)
		if r.status != http.StatusBadRequest {
			t.Fatalf("chat with %s: %d %s", esc, r.status, r.raw)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
	r := b.create(t, acmeKey, "esc-pair", `{"prompt":"triage","input":{"subject":"smile \ud83d\ude00 \\u0000 literal","body":"I cannot log in since yesterday."}}`)
	if r.status >= 300 {
		t.Fatalf("a surrogate pair and an escaped backslash are valid: %d %s", r.status, r.raw)
	}
}

// Retrying a failed job whose expired key a newer job has claimed is a 409
// that names the newer job; the old job stays failed (one live job per key).
func TestRetryRefusedWhenKeyBelongsToNewerJob(t *testing.T) {
	b := setup(t, options{respond: func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			return providers.Step{Output: `{"category":"nope"}`}
		}
		return providers.Step{Output: validTriage}
	}})
	first := b.create(t, acmeKey, "rebind", triageBody("x"), "Prefer", "wait=30")
	if first.body["state"] != "failed" {
		t.Fatalf("first: %s", first.raw)
	}
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	newer := b.create(t, acmeKey, "rebind", triageBody("y"), "Prefer", "wait=30")
	if newer.status != http.StatusCreated || newer.job() == first.job() {
		t.Fatalf("claim of the expired key: %d %s", newer.status, newer.raw)
	}
	r := b.do(t, "POST", "/v1/jobs/"+first.job()+"/retry", acmeKey, "")
	if r.status != http.StatusConflict || !strings.HasSuffix(r.body["type"].(string), "idempotency-key-rebound") ||
		!strings.Contains(r.body["detail"].(string), newer.job()) {
		t.Fatalf("retry: %d %s, want 409 idempotency-key-rebound naming %s", r.status, r.raw, newer.job())
	}
	if j := b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, ""); j.body["state"] != "failed" {
		t.Fatalf("old job after the refused retry: %s", j.raw)
	}
}
