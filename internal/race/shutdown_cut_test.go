package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// stopNow is the end of a drain: its budget has run out, or a second signal
// came (Server.StopNow).
func stopNow(b *bundle) {
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	b.runner.Stop(cut)
}

// SPEC §15: an attempt that received bytes and is then cut has a known
// outcome — failed — and the job may fail over; only an attempt with no
// response byte at all is unknown. An attempt cut by the end of the drain
// (shutdown.drain run out, or a second SIGTERM) after its provider began
// answering is recorded failed (kind shutdown) by the stopping router, and
// the replica that adopts the job fails over. (Found in review: it was
// abandoned whatever it had received, recovery marked it unknown, and the
// job ended unknown, waiting for an operator.)
func TestShutdownCutAfterBytesFailsTheAttempt(t *testing.T) {
	called := make(chan struct{}, 1)
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			called <- struct{}{}
			return providers.Step{Hang: true, HangAfterBytes: true, Output: validTriage} // half an answer, then silence
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(0)
	stopNow(b)
	// Had the attempt been left in flight, its lease would run out
	// (simulated: no waiting).
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE attempts SET lease_expires_at = now() - interval '1 second'
		WHERE job_id = $1 AND state IN ('starting', 'running')`, job.ID); err != nil {
		t.Fatal(err)
	}
	// The other replica's providers have no lookup (most do not): nothing
	// reconciles an unknown attempt.
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", Adapter: noLookup{providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.OK(validTriage)})}},
		{Name: "fallback", Adapter: noLookup{providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Respond: racetest.OK(validTriage)})}}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	other.Runner.RecoverOnce(context.Background(), 10)
	j := other.WaitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptFailed || j.State != store.JobSucceeded || errorKind(t, p) != "shutdown" {
		t.Fatalf("job %s, primary attempt %s (%s); want the primary failed, kind shutdown (it had received bytes: a known outcome) and the job failed over",
			j.State, p.State, p.Error)
	}
}

// An attempt cut by the end of the drain before any response byte is unknown
// at once, with kind shutdown and a message that says what happened — not
// left in flight until its lease expires and then blamed on a router that
// died or lost the database.
func TestShutdownCutBeforeAnyByteIsUnknownAtOnce(t *testing.T) {
	called := make(chan struct{}, 1)
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			called <- struct{}{}
			return providers.Step{Hang: true}
		}},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(0)
	stopNow(b)
	p := attemptBy(b.job(t, job.ID), "primary")
	if p.State != store.AttemptUnknown || errorKind(t, p) != "shutdown" ||
		!strings.Contains(string(p.Error), "was stopped") || !strings.Contains(string(p.Error), "waited for its first byte") {
		t.Fatalf("primary attempt %s (%s); want it unknown at once, kind shutdown, saying the router was stopped while it waited for its first byte",
			p.State, p.Error)
	}
}

// errorKind is the kind of an attempt's stored error.
func errorKind(t *testing.T, a *store.Attempt) string {
	t.Helper()
	var e struct {
		Kind string `json:"kind"`
	}
	if len(a.Error) > 0 {
		if err := json.Unmarshal(a.Error, &e); err != nil {
			t.Fatal(err)
		}
	}
	return e.Kind
}

// noLookup is a provider without the lookup capability.
type noLookup struct{ providers.Provider }
