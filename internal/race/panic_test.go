package race_test

import (
	"encoding/json"
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
