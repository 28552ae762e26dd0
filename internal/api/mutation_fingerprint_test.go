package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The fingerprint covers the route choice and the prompt version as the
// caller sent them, besides the input (SPEC §2, docs/idempotency.md): the same
// key and input with another route or prompt version is another intent, a
// 409 that creates nothing, not a replay of the first job.
func TestKeyReusedWithAnotherRouteOrPromptVersionConflicts(t *testing.T) {
	b := setup(t, options{})
	const input = `"input":{"subject":"A","body":"B"}`
	first := b.create(t, acmeKey, "fp", `{"prompt":"triage",`+input+`}`, "Prefer", "wait=30")
	if first.status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.status, first.raw)
	}
	for _, body := range []string{
		`{"prompt":"triage","route":"default",` + input + `}`,
		`{"prompt":"triage","prompt_version":"3",` + input + `}`,
	} {
		r := b.create(t, acmeKey, "fp", body)
		if r.status != http.StatusConflict {
			t.Fatalf("%s with the key of a request without it: %d %s, want 409", body, r.status, r.raw)
		}
		if typ, _ := r.body["type"].(string); !strings.HasSuffix(typ, "idempotency-key-reused") {
			t.Fatalf("%s: type %q, want idempotency-key-reused", body, typ)
		}
		if _, ok := r.body["id"]; ok {
			t.Fatalf("%s: a conflict must not return the existing job: %s", body, r.raw)
		}
	}
	// The same request again is still the first job.
	again := b.create(t, acmeKey, "fp", `{"prompt":"triage",`+input+`}`)
	if again.status != http.StatusOK || again.job() != first.job() {
		t.Fatalf("replay: %d %s", again.status, again.raw)
	}
	if c := b.count(t, "SELECT count(*) FROM jobs"); c != 1 {
		t.Fatalf("jobs = %d, want 1", c)
	}
	if c := b.primary.Calls(); c != 1 {
		t.Fatalf("provider calls = %d, want 1", c)
	}
}
