package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// SPEC §3, §6.3, §6.7: a valid answer that arrives after its attempt was
// resolved `failed` (it had gone unknown when its lease expired) is discarded,
// and the job, not complete, goes on: it fails over to the next provider
// instead of failing with that provider never tried.
func TestLateAnswerAfterResolutionFailsOver(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-release
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	<-called
	// The attempt's lease expires while its call is still running (this
	// process stalled). Its owner is cleared with it so that this runner's
	// lease keeper cannot renew it before recovery expires it.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second', lease_owner = NULL
		WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if j := b.job(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s after its attempt's lease expired, want unknown", j.State)
	}
	// An operator resolves the attempt as failed; the API resumes the job.
	resume, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "operator"})
	if err != nil || !resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.runner.Submit(job)
	close(release) // the primary's valid answer arrives only now
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), want it succeeded on the fallback", j.State, derefString(j.Error))
	}
	fb := attemptBy(j, "fallback")
	if fb == nil || j.CompletedBy == nil || *j.CompletedBy != fb.ID {
		t.Fatalf("attempts %+v, completed by %v: want the fallback's attempt to win", j.Attempts, j.CompletedBy)
	}
	if a := attemptBy(j, "primary"); a.State != store.AttemptFailed {
		t.Fatalf("primary's attempt %s, want it left failed as resolved", a.State)
	}
	if n := b.prov["fallback"].Calls(); n != 1 {
		t.Fatalf("fallback called %d times, want 1", n)
	}
}

// SPEC §17, §6.2: a job handed over (SIGTERM) while a transient failure's
// retry was due is retried on the same provider by the replica that adopts
// it, no sooner than the provider's Retry-After; it is not failed as if the
// provider had been tried.
func TestHandedOverRetryIsRetriedByAdopter(t *testing.T) {
	const retryAfter = 200 * time.Millisecond
	obs := newHoldFinished(1)
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", maxRetries: 3, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: retryAfter}
		}})
	job := b.submit(t)
	drainWhileHeld(t, b, obs, job.ID, 1)

	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", MaxRetries: 3, Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j := other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 {
		t.Fatalf("adopted job %s (%v) with attempts %+v: want it won by a retry", j.State, derefString(j.Error), j.Attempts)
	}
	first, retry := j.Attempts[0], j.Attempts[1]
	if retry.Provider != "primary" || retry.Role != store.RoleRetry || retry.State != store.AttemptWon {
		t.Fatalf("second attempt %+v, want the primary's retry, won", retry)
	}
	// Both times are the database's.
	if gap := retry.CreatedAt.Sub(*first.FinishedAt); gap < retryAfter {
		t.Fatalf("retried %s after the failure, sooner than its Retry-After %s", gap, retryAfter)
	}
	if n := other.Prov["primary"].Calls(); n != 1 {
		t.Fatalf("adopter called the primary %d times, want 1", n)
	}
}

// The adopter's retries are bounded by max_retries counting the retries made
// in this round before the handover: with one retry of two left, it retries
// once and then fails over.
func TestHandedOverRetryCountsEarlierRetries(t *testing.T) {
	obs := newHoldFinished(2)
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", maxRetries: 2, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: time.Millisecond}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	job := b.submit(t)
	drainWhileHeld(t, b, obs, job.ID, 2)

	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", MaxRetries: 2, Respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 429, RetryAfter: time.Millisecond}
			}
			return providers.Step{Output: validTriage}
		}},
		{Name: "fallback", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j := other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("adopted job %s (%v)", j.State, derefString(j.Error))
	}
	var roles []string
	for _, a := range j.Attempts {
		roles = append(roles, a.Provider+"/"+a.Role+"/"+a.State)
	}
	want := []string{"primary/primary/failed", "primary/retry/failed", "primary/retry/failed", "fallback/failover/won"}
	if len(roles) != len(want) {
		t.Fatalf("attempts %v, want %v", roles, want)
	}
	for i := range want {
		if roles[i] != want[i] {
			t.Fatalf("attempts %v, want %v", roles, want)
		}
	}
	if n := other.Prov["primary"].Calls(); n != 1 {
		t.Fatalf("adopter called the primary %d times, want 1 (one retry left of max_retries 2)", n)
	}
}

// drainWhileHeld drains b's runner while its nth attempt's end is held (so
// no retry can start here), lets the attempt's end through, stops the
// runner, and checks that the job was handed over unsettled with n failed
// attempts.
func drainWhileHeld(t *testing.T, b *bundle, obs *holdFinished, jobID string, n int) {
	t.Helper()
	<-obs.held
	b.runner.Drain(0)
	close(obs.release)
	b.stop()
	j := b.job(t, jobID)
	if j.State != store.JobRunning || len(j.Attempts) != n {
		t.Fatalf("after the drain: job %s, attempts %+v: want it running with %d attempts", j.State, j.Attempts, n)
	}
	for _, a := range j.Attempts {
		if a.State != store.AttemptFailed {
			t.Fatalf("after the drain: attempts %+v, want every one failed", j.Attempts)
		}
	}
	if owner := leaseOwner(t, b, jobID); owner != "" {
		t.Fatalf("the job's lease is still held by %q after the drain", owner)
	}
}

// holdFinished is an observer that holds the end of the nth attempt — recorded
// in the database, not yet seen by the orchestrator — until released.
type holdFinished struct {
	nth           int
	held, release chan struct{}
	mu            sync.Mutex
	seen          int
}

func newHoldFinished(nth int) *holdFinished {
	return &holdFinished{nth: nth, held: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdFinished) AttemptFinished(string, string, string, providers.Kind, time.Duration, providers.Usage) {
	h.mu.Lock()
	h.seen++
	hold := h.seen == h.nth
	h.mu.Unlock()
	if hold {
		close(h.held)
		<-h.release
	}
}
func (*holdFinished) AttemptStarted(string, string) {}
func (*holdFinished) RaceLost(string)               {}
func (*holdFinished) HedgeStarted(string)           {}
func (*holdFinished) JobSettled(string)             {}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
