package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose lease expired (recovery made it and its job unknown) and
// whose provider then answered with a definitive failure is resolved failed
// by its own run, which moves the job back to running with no lease: the
// runner submits it again, so the race goes on (here on the fallback, an
// empty answer being the provider's failure, failed over) without a recovery
// pass (none runs in this test).
func TestLateFailureResolutionResumesTheJob(t *testing.T) {
	b, j := lateFailure(t, race.Route{}, providers.Step{Error: &providers.Error{Kind: providers.KindEmptyResponse,
		Message: "the completion has no choices"}})
	if j.State != store.JobSucceeded || b.Prov["fallback"].Calls() != 1 {
		t.Fatalf("job %s, fallback calls %d; want succeeded on the fallback", j.State, b.Prov["fallback"].Calls())
	}
	if a := racetest.AttemptOn(j, "primary"); a == nil || a.State != store.AttemptFailed || lateKind(t, a) != providers.KindEmptyResponse {
		t.Fatalf("primary attempt %s, want failed with its late empty_response (resolved by its late failure)", attemptsOf(j))
	}
}

// lateFailure runs a job on route (primary, then fallback answering validly)
// whose primary attempt goes unknown (its lease expired, recovery's
// ExpireAttemptLeases) while its request is out, and then answers with
// step's failure. No recovery pass runs: the late failure resolves the
// attempt and the runner resumes the job. It returns the job once ended.
func lateFailure(t *testing.T, route race.Route, step providers.Step) (*racetest.Bundle, *store.Job) {
	t.Helper()
	return lateFailureRetried(t, route, 0, step)
}

// lateFailureRetried is lateFailure with the primary's max_retries at
// retries; a retry on the primary answers validly.
func lateFailureRetried(t *testing.T, route race.Route, retries int, step providers.Step) (*racetest.Bundle, *store.Job) {
	t.Helper()
	release := make(chan struct{})
	sent := make(chan struct{})
	var once sync.Once
	b := racetest.New(t, racetest.Options{
		Route: route,
		Providers: []racetest.Provider{
			{Name: "primary", MaxRetries: retries, Respond: func(call int, _ *providers.Request) providers.Step {
				if call > 1 {
					return providers.Step{Output: racetest.ValidTriage}
				}
				once.Do(func() { close(sent) })
				<-release
				return step
			}},
			{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	ctx := context.Background()
	job := b.SubmitUnplanned(t)
	<-sent
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Store.JobStateAny(ctx, job.ID); st != store.JobUnknown {
		t.Fatalf("after expiry: %s, want unknown", st)
	}
	changed, unsubscribe := b.Listener.Subscribe(job.ID)
	defer unsubscribe()
	close(release)
	// Woken by the job's notifications; the bound only fails a job that
	// nobody resumes, as WaitSettled's does.
	timeout := time.After(60 * time.Second)
	for {
		st, err := b.Store.JobStateAny(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(st) {
			return b, b.Job(t, job.ID)
		}
		select {
		case <-changed:
		case <-timeout:
			j := b.Job(t, job.ID)
			t.Fatalf("job still %s after its only unknown attempt was resolved failed (attempts %d, fallback calls %d): nobody resumed it",
				j.State, len(j.Attempts), b.Prov["fallback"].Calls())
		}
	}
}

// lateKind is the kind of an attempt's stored error.
func lateKind(t *testing.T, a *store.Attempt) providers.Kind {
	t.Helper()
	var e struct {
		Kind providers.Kind `json:"kind"`
	}
	if err := json.Unmarshal(a.Error, &e); err != nil {
		t.Fatalf("attempt error %s: %v", a.Error, err)
	}
	return e.Kind
}
