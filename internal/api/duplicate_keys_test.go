package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// wantBadJSON asserts a 400 invalid-json problem whose detail says every one
// of parts.
func wantBadJSON(t *testing.T, what string, r reply, parts ...string) {
	t.Helper()
	typ, _ := r.body["type"].(string)
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusBadRequest || !strings.HasSuffix(typ, "/invalid-json") {
		t.Errorf("%s: %d %s, want a 400 invalid-json problem", what, r.status, r.raw)
		return
	}
	for _, p := range parts {
		if !strings.Contains(detail, p) {
			t.Errorf("%s: detail %q does not say %q", what, detail, p)
		}
	}
}

// An object of a request body with two members of one name means different
// things to different JSON readers (encoding/json and jsonb keep the last,
// others the first): answered for one input and stored with another, a job
// would have two. It is refused 400 before anything is stored, naming the key
// and where it is, and the Idempotency-Key stays free for the corrected body.
// So is a resolution's result with a duplicate key, and a duplicate top-level
// member.
func TestDuplicateKeysInABodyAreRefused(t *testing.T) {
	b := setup(t, options{})
	body := `{"prompt":"triage","input":{"subject":"Refund please","subject":"Login","body":"I cannot log in since yesterday."}}`
	r := b.create(t, acmeKey, "dup-input-1", body)
	wantBadJSON(t, "duplicate key in input", r, `"subject"`, "/input", "send each key once")
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for a refused body, want none", n)
	}
	wantBadJSON(t, "duplicate top-level member", b.create(t, acmeKey, "dup-input-1", `{"prompt":"triage","prompt":"triage","input":{"subject":"a","body":"b"}}`),
		`member "prompt" appears twice`, "send each key once")
	wantBadJSON(t, "duplicate key deeper in input", b.create(t, acmeKey, "dup-input-1", `{"prompt":"triage","input":{"subject":"a","body":"b","x":[{"k":1,"k":2}]}}`),
		`"k"`, "/input/x/0")
	r = b.create(t, acmeKey, "dup-input-1", triageBody("Login"), "Prefer", "wait=10")
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the corrected body with the same key: %d replayed %q %s, want 201 created fresh",
			r.status, r.header.Get("Idempotent-Replayed"), r.raw)
	}
}

func TestDuplicateKeysInAResolutionResultAreRefused(t *testing.T) {
	b := setup(t, options{
		timeout: 50 * time.Millisecond,
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
	})
	id := b.create(t, acmeKey, "dup-result", triageBody("hang"), "Prefer", "wait=30").job()
	path := "/v1/jobs/" + id + "/attempts/1/resolve"
	dup := `{"outcome":"succeeded","result":{"category":"billing","category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}}`
	wantBadJSON(t, "duplicate key in result", b.do(t, "POST", path, acmeKey, dup), `"category"`, "/result", "send each key once")
	if r := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, ""); r.body["state"] != "unknown" {
		t.Fatalf("after a refused resolution the job is %v, want still unknown: %s", r.body["state"], r.raw)
	}
	if r := b.do(t, "POST", path, acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`); r.status != http.StatusOK {
		t.Fatalf("the corrected resolution: %d %s, want 200", r.status, r.raw)
	}
}
