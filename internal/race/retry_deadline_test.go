package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// tooLateRetry answers every call with a 429 whose Retry-After (20 s, within
// max_retry_after) is longer than the whole job's deadline of the tests below.
func tooLateRetry(int, *providers.Request) providers.Step {
	return providers.Step{Status: 429, RetryAfter: 20 * time.Second}
}

// A transient failure whose Retry-After is longer than what is left of the
// job's deadline is not waited for: the retry could never start, and a timer
// outliving the deadline only failed the job with the healthy fallback never
// called. The race fails over at once, as for a Retry-After beyond
// max_retry_after. Found by review.
func TestRetryAfterBeyondDeadlineFailsOver(t *testing.T) {
	b := setup(t, race.Route{Deadline: 15 * time.Second},
		provSpec{name: "primary", maxRetries: 1, respond: tooLateRetry},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), want it won by the fallback", j.State, derefString(j.Error))
	}
	if fb := attemptBy(j, "fallback"); fb == nil || fb.State != store.AttemptWon || len(j.Attempts) != 2 {
		t.Fatalf("attempts %+v: want the primary's failure, then the fallback's win", j.Attempts)
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want once (no retry)", n)
	}
}

// With nothing to fail over to, such a job fails at once, saying that the
// Retry-After exceeded what was left of the deadline — not, when the
// deadline passes, that it passed.
func TestRetryAfterBeyondDeadlineWithoutFallbackFailsAtOnce(t *testing.T) {
	b := setup(t, race.Route{Deadline: 15 * time.Second},
		provSpec{name: "primary", maxRetries: 1, respond: tooLateRetry})
	j := b.waitSettled(t, b.submit(t).ID)
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "Retry-After of 20s exceeds the") ||
		!strings.Contains(why, "left of the job's deadline of 15s") || strings.Contains(why, "passed") {
		t.Fatalf("job %s, error %q: want it failed for a Retry-After beyond the deadline", j.State, why)
	}
	if n := b.prov["primary"].Calls(); n != 1 || len(j.Attempts) != 1 {
		t.Fatalf("primary called %d times, %d attempts: want one, no retry", n, len(j.Attempts))
	}
}

// A job resumed with a transient failure whose retry was due (a hand-over,
// an adoption) does not schedule that retry when its Retry-After is longer
// than what is left of the deadline: it fails over (resumeRetry).
func TestResumedRetryBeyondDeadlineFailsOver(t *testing.T) {
	b := setup(t, race.Route{Deadline: 15 * time.Second},
		provSpec{name: "primary", maxRetries: 1, respond: ok(validTriage)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	ctx := context.Background()
	job := b.submitWithoutRunning(t, "test-runner")
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "primary", Role: store.RolePrimary, LeaseOwner: "test-runner"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{
		"kind": "rate_limited", "fault": "provider", "action": "retry", "status": 429, "retry_after_ms": 20000,
		"message": "provider primary: rate_limited (HTTP 429)"}}); err != nil {
		t.Fatal(err)
	}
	b.runner.Submit(job)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil || attemptBy(j, "fallback").State != store.AttemptWon {
		t.Fatalf("job %s (%v), attempts %+v: want it won by the fallback", j.State, derefString(j.Error), j.Attempts)
	}
	if n := b.prov["primary"].Calls(); n != 0 {
		t.Fatalf("primary called %d times, want no retry", n)
	}
}
