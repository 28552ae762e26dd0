package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// Member names are case-sensitive (encoding/json matches them regardless of
// case): "Prompt" is an unknown field, refused 400 with the name it differs
// from only in case, not taken for "prompt"; and of "input" and "Input" the
// second is not run instead of the first. A name written with escapes that
// reads as "prompt" is "prompt".
func TestMemberNamesAreCaseSensitive(t *testing.T) {
	b := setup(t, options{})
	wantBadJSON(t, "case-folded names", b.create(t, acmeKey, "case-1", `{"Prompt":"triage","INPUT":{"subject":"Login","body":"I cannot log in."}}`),
		`unknown field "Prompt"`, `did you mean "prompt"?`, "case-sensitive", "prompt, prompt_version, input, route")
	wantBadJSON(t, "a second input in another case", b.create(t, acmeKey, "case-1",
		`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."},"Input":{"subject":"x"}}`),
		`unknown field "Input"`, `did you mean "input"?`)
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused bodies, want none", n)
	}
	if r := b.create(t, acmeKey, "case-1", `{"route":"default", "\u0070rompt" : "triage","input":{"subject":"Login","body":"I cannot log in."}}`, "Prefer", "wait=10"); r.status != http.StatusCreated {
		t.Fatalf("exact names, one escaped: %d %s, want 201", r.status, r.raw)
	}
}

func TestResolutionMemberNamesAreCaseSensitive(t *testing.T) {
	b := setup(t, options{
		timeout: 50 * time.Millisecond,
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
	})
	id := b.create(t, acmeKey, "case-resolve", triageBody("hang"), "Prefer", "wait=30").job()
	path := "/v1/jobs/" + id + "/attempts/1/resolve"
	wantBadJSON(t, "Outcome", b.do(t, "POST", path, acmeKey, `{"Outcome":"failed"}`), `unknown field "Outcome"`, `did you mean "outcome"?`)
	if r := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, ""); r.body["state"] != "unknown" {
		t.Fatalf("after a refused resolution the job is %v, want still unknown: %s", r.body["state"], r.raw)
	}
}
