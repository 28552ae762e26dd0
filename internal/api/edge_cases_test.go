package api_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A job id that is not a UUID in the canonical form the router hands out names
// no job: every endpoint that takes one answers 404, not a database error (500).
// Other spellings of a UUID (urn:uuid:, braces, no hyphens, uppercase) are not
// the job's id either.
func TestNonCanonicalJobIDIsNotFound(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "ids-1", triageBody("ids"), "Prefer", "wait=30")
	if job.status != http.StatusCreated {
		t.Fatalf("create: %d %s", job.status, job.raw)
	}
	id := job.job()
	ids := []string{"nope", "urn:uuid:" + id, "{" + id + "}", strings.ReplaceAll(id, "-", ""), strings.ToUpper(id), id + " "}
	for _, bad := range ids {
		p := "/v1/jobs/" + url.PathEscape(bad)
		for _, req := range []struct{ method, path, body string }{
			{"GET", p, ""},
			{"POST", p + "/cancel", ""},
			{"POST", p + "/retry", ""},
			{"GET", p + "/events", ""},
			{"POST", p + "/attempts/1/resolve", `{"outcome":"failed"}`},
		} {
			r := b.do(t, req.method, req.path, acmeKey, req.body)
			if r.status != http.StatusNotFound || !strings.HasSuffix(r.body["type"].(string), "not-found") {
				t.Errorf("%s %s: %d %s, want 404 not found", req.method, req.path, r.status, r.raw)
			}
		}
	}
	// Nothing happened to the job under any of those names.
	if r := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, ""); r.status != http.StatusOK || r.body["state"] != "succeeded" {
		t.Fatalf("the job afterwards: %d %s", r.status, r.raw)
	}
}

// A cursor crafted with another spelling of a UUID than the one the router
// returns is read as that UUID, not sent to the database to fail there.
func TestCraftedCursorIsHandled(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "cur-1", triageBody("cursor"), "Prefer", "wait=30")
	if job.status != http.StatusCreated {
		t.Fatalf("create: %d %s", job.status, job.raw)
	}
	created := job.body["created_at"].(string)
	for _, id := range []string{"urn:uuid:" + job.job(), "{" + job.job() + "}", strings.ToUpper(job.job())} {
		c := base64.RawURLEncoding.EncodeToString([]byte(`{"t":"` + created + `","id":"` + id + `"}`))
		r := b.do(t, "GET", "/v1/jobs?cursor="+c, acmeKey, "")
		data, ok := r.body["data"].([]any)
		if r.status != http.StatusOK || !ok || len(data) != 0 {
			t.Errorf("cursor at the only job, id %q: %d %s, want 200 and no job after it", id, r.status, r.raw)
		}
	}
	c := base64.RawURLEncoding.EncodeToString([]byte(`{"t":"` + created + `","id":"nope"}`))
	if r := b.do(t, "GET", "/v1/jobs?cursor="+c, acmeKey, ""); r.status != http.StatusBadRequest {
		t.Errorf("cursor with id nope: %d %s, want 400", r.status, r.raw)
	}
}

// An operation filter that is not text (a NUL, bytes that are not UTF-8) is a
// 400 naming the parameter, not a database error nor an empty page.
func TestListOperationNotText(t *testing.T) {
	b := setup(t, options{})
	for _, q := range []string{"?operation=%00", "?operation=%ff", "?operation=triage%00"} {
		wantListRejected(t, b, q, "operation must be UTF-8 text without NUL")
	}
}

// No attempt number above the database's int4 exists: 404, not a failure to
// encode it.
func TestResolveHugeAttemptNumber(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "seq-1", triageBody("seq"), "Prefer", "wait=30")
	if job.status != http.StatusCreated {
		t.Fatalf("create: %d %s", job.status, job.raw)
	}
	// Past int64 too: a positive integer, only one no attempt has (found by
	// review: strconv's range error made it a 400 "not a positive integer").
	for _, seq := range []string{"2147483648", "9223372036854775807", "9223372036854775808", "99999999999999999999999"} {
		r := b.do(t, "POST", "/v1/jobs/"+job.job()+"/attempts/"+seq+"/resolve", acmeKey, `{"outcome":"failed"}`)
		if r.status != http.StatusNotFound || r.body["type"] == nil || !strings.HasSuffix(r.body["type"].(string), "attempt-not-found") {
			t.Errorf("resolve attempt %s: %d %s, want 404 attempt not found", seq, r.status, r.raw)
		}
	}
}

// A body is one JSON value and nothing after it but whitespace: a stray '}'
// or ']' after a valid object is a 400, and nothing is stored.
func TestBodyWithTrailingBytesIsRejected(t *testing.T) {
	b := setup(t, options{})
	for i, tail := range []string{"}", "]", " }", "\n]", `{}`, "x"} {
		key := "trail-" + string(rune('a'+i))
		r := b.create(t, acmeKey, key, triageBody("trail")+tail)
		if r.status != http.StatusBadRequest || r.body["type"] == nil || !strings.HasSuffix(r.body["type"].(string), "invalid-json") ||
			!strings.Contains(r.body["detail"].(string), "more than one JSON value") {
			t.Errorf("body + %q: %d %s, want 400 invalid-json", tail, r.status, r.raw)
		}
		if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = $1`, key); n != 0 {
			t.Errorf("body + %q: %d jobs stored", tail, n)
		}
	}
	if r := b.create(t, acmeKey, "trail-ws", triageBody("trail")+" \r\n\t", "Prefer", "wait=30"); r.status != http.StatusCreated {
		t.Errorf("body + whitespace: %d %s, want 201", r.status, r.raw)
	}
}

// Prefer: wait is capped at the configured maximum (60s by default) however
// large, and only the first wait preference counts (RFC 7240 §2). The job
// succeeds at once, so a request that waits answers 201 and says which wait it
// applied; one that does not wait answers 202 without Preference-Applied.
func TestPreferWaitHugeAndDuplicated(t *testing.T) {
	b := setup(t, options{})
	for i, c := range []struct {
		prefer  []string
		status  int
		applied string
	}{
		{[]string{"wait=10000000000"}, http.StatusCreated, "wait=60"},
		{[]string{"wait=99999999999999999999999"}, http.StatusCreated, "wait=60"},
		{[]string{"wait=5, wait=0"}, http.StatusCreated, "wait=5"},
		{[]string{"wait=5", "wait=0"}, http.StatusCreated, "wait=5"},
		{[]string{"respond-async, wait=7;x=y, wait=0"}, http.StatusCreated, "wait=7"},
		{[]string{"wait=0, wait=30"}, http.StatusAccepted, ""},
		{[]string{"wait=soon", "wait=30"}, http.StatusAccepted, ""},
	} {
		var hdr []string
		for _, p := range c.prefer {
			hdr = append(hdr, "Prefer", p)
		}
		r := b.create(t, acmeKey, "wait-"+string(rune('a'+i)), triageBody("wait"), hdr...)
		if r.status != c.status || r.header.Get("Preference-Applied") != c.applied {
			t.Errorf("Prefer %q: %d with Preference-Applied %q, want %d with %q (%s)",
				c.prefer, r.status, r.header.Get("Preference-Applied"), c.status, c.applied, r.raw)
		}
	}
}
