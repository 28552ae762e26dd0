package race_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// limitReason is the failure reason of a job whose round spent max_attempts
// 2: the store's refusal of another attempt (store.ErrAttemptLimit).
var limitReason = store.AttemptLimitError(2, 2).Error()

// The round's last allowed attempt (max_attempts 2) failed with a retryable
// error whose Retry-After (25 s) is within max_retry_after: the retry was
// scheduled and waited out only for the store to refuse it (attempt limit
// reached), the caller waiting for nothing. The job now fails at once, with
// the limit's reason: before the retry would have been due, which a retry
// waited out cannot be. Found by review.
func TestRetryOfTheLastAllowedAttemptIsNotWaitedFor(t *testing.T) {
	const lastRetryAfter = 25 * time.Second
	lastCall := make(chan time.Time, 1)
	b := setup(t, race.Route{MaxInflight: 1, MaxAttempts: 2},
		provSpec{name: "primary", maxRetries: 3, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503, RetryAfter: 10 * time.Millisecond}
			}
			if call == 2 {
				lastCall <- time.Now()
			}
			return providers.Step{Status: 503, RetryAfter: lastRetryAfter}
		}},
	)
	j := b.submit(t)
	got := b.waitSettled(t, j.ID)
	settledAt := time.Now()
	retryDue := (<-lastCall).Add(lastRetryAfter)
	if got.State != store.JobFailed {
		t.Fatalf("job %s (%s), want failed", got.State, roles(got))
	}
	if !settledAt.Before(retryDue) {
		t.Fatalf("job settled after the Retry-After of its last allowed attempt ran out (%s): the retry max_attempts refuses was waited for", roles(got))
	}
	if !strings.Contains(deref(got.Error), limitReason) {
		t.Fatalf("job error %q, want the attempt limit's reason %q", deref(got.Error), limitReason)
	}
	if len(got.Attempts) != 2 || b.prov["primary"].Calls() != 2 {
		t.Fatalf("attempts %s, calls %d: want the two max_attempts allows", roles(got), b.prov["primary"].Calls())
	}
}

// With max_attempts spent (the primary's attempt and its retry), the
// failover's target had had its breaker opened, for 90 s: the job was parked
// for the breaker's wait (bounded by the 3 min deadline) only to fail then
// with "attempt limit reached". It now fails at once with the limit's
// reason: before the breaker would admit, past the wait bound of
// waitSettled (60 s), which a job waiting for it cannot. Found by review.
func TestBreakerWaitPastMaxAttemptsIsNotWaitedFor(t *testing.T) {
	adm := &opensLater{}
	b := setupWith(t, race.Route{MaxInflight: 1, MaxAttempts: 2, Deadline: 3 * time.Minute}, adm,
		provSpec{name: "primary", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 2 {
				adm.open.Store(true)
			}
			return providers.Step{Status: 503, RetryAfter: 10 * time.Millisecond}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.submit(t)
	got := b.waitSettled(t, j.ID)
	if got.State != store.JobFailed {
		t.Fatalf("job %s (%s), want failed", got.State, roles(got))
	}
	if !strings.Contains(deref(got.Error), limitReason) {
		t.Fatalf("job error %q, want the attempt limit's reason %q", deref(got.Error), limitReason)
	}
	if n := b.prov["fallback"].Calls(); n != 0 || len(got.Attempts) != 2 {
		t.Fatalf("attempts %s, fallback calls %d: want the primary's two only", roles(got), n)
	}
}

// opensLater is an admission whose breaker of "fallback" opens, for 90 s,
// once open is set.
type opensLater struct{ open atomic.Bool }

const opensLaterFor = 90 * time.Second

func (a *opensLater) Admit(p string) (func(race.Outcome), bool, string) {
	if p == "fallback" && a.open.Load() {
		return nil, false, "breaker open"
	}
	return func(race.Outcome) {}, true, ""
}

func (a *opensLater) AdmitsIn(p string) (time.Duration, bool) {
	if p == "fallback" && a.open.Load() {
		return opensLaterFor, true
	}
	return 0, true
}

func (a *opensLater) State(p string) (bool, string) {
	if p == "fallback" && a.open.Load() {
		return false, "breaker open"
	}
	return true, ""
}
