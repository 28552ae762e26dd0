package race_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// An adapter that panics fails its attempt (adapter_panic) and the job fails
// over to the next provider; the process (this test binary) lives on.
func TestAdapterPanicFailsAttemptAndFailsOver(t *testing.T) {
	b := setup(t, race.Route{MaxInflight: 1, MaxAttempts: 3},
		provSpec{name: "primary", onCall: func(int, *providers.Request) { panic("index out of range [-1]") }},
		provSpec{name: "fallback", respond: ok(validTriage)})
	defer b.stop()
	job := b.waitSettled(t, b.submit(t).ID)
	if job.State != store.JobSucceeded {
		t.Fatalf("job %s, want succeeded through the fallback: %+v", job.State, job.Attempts)
	}
	first := job.Attempts[0]
	if first.Provider != "primary" || first.State != store.AttemptFailed {
		t.Fatalf("first attempt %s on %s, want failed on primary", first.State, first.Provider)
	}
	var e struct{ Kind, Fault, Message string }
	if err := json.Unmarshal(first.Error, &e); err != nil {
		t.Fatal(err)
	}
	if e.Kind != string(providers.KindAdapterPanic) || e.Fault != string(providers.FaultRouter) {
		t.Fatalf("attempt error %+v, want kind adapter_panic, fault router", e)
	}
}

// A provider's answer holding what the database cannot store (\u0000 in its
// JSON) is invalid output, and a provider error message holding NUL is
// recorded: neither wedges the job (before, the win and the attempt's end
// failed to commit and the job waited for its lease to expire).
func TestUnstorableProviderTextFailsCleanly(t *testing.T) {
	b := setup(t, race.Route{MaxInflight: 1, MaxAttempts: 3},
		provSpec{name: "primary", respond: ok(`{"category":"technical","priority":"high","summary":"Customer cannot log in \u0000 after the reset.","needs_human":false}`)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindServerError, StatusCode: 500, Code: "e\x00", Message: "bad \x00 thing \xff"}}
		}})
	defer b.stop()
	job := b.waitSettled(t, b.submit(t).ID)
	if job.State != store.JobFailed || len(job.Attempts) != 2 {
		t.Fatalf("job %s with %d attempts, want failed after both providers", job.State, len(job.Attempts))
	}
	if a := job.Attempts[0]; a.State != store.AttemptInvalid || !strings.Contains(string(a.ValidationErrors), "json.unstorable") {
		t.Fatalf("primary attempt %s %s, want invalid with json.unstorable", a.State, a.ValidationErrors)
	}
	if a := job.Attempts[1]; a.State != store.AttemptFailed || !strings.Contains(string(a.Error), "bad \ufffd thing") {
		t.Fatalf("fallback attempt %s %s, want failed with its message recorded", a.State, a.Error)
	}
}
