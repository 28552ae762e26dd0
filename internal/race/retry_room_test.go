package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// lateRetry answers a first call with a 429 asking for retryAfter, and hangs
// on the retry (a provider that would answer, but not within the seconds
// the job has left).
func lateRetry(retryAfter time.Duration) func(int, *providers.Request) providers.Step {
	return func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			return providers.Step{Status: 429, RetryAfter: retryAfter}
		}
		return providers.Step{Hang: true}
	}
}

// A Retry-After just under what is left of the job's deadline used to be
// waited for: the retry was then sent with almost no time, the deadline cut
// it before any response byte, and the job ended unknown with a healthy
// fallback never called. A retry that would have less than its target's
// first-byte budget left is not made while there is a target to fail over
// to. Found by review.
func TestRetryWithNoRoomBeforeTheDeadlineFailsOver(t *testing.T) {
	b := setup(t, race.Route{Deadline: 30 * time.Second},
		provSpec{name: "primary", maxRetries: 1, firstByte: 20 * time.Second, respond: lateRetry(15 * time.Second)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), attempts %+v: want it won by the fallback", j.State, derefString(j.Error), j.Attempts)
	}
	if fb := attemptBy(j, "fallback"); fb == nil || fb.State != store.AttemptWon || len(j.Attempts) != 2 {
		t.Fatalf("attempts %+v: want the primary's 429, then the fallback's win", j.Attempts)
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want once (no retry)", n)
	}
}

// The same holds for a jittered wait past the deadline: it used to be cut to
// the Retry-After however little that left. Here the Retry-After itself
// leaves room enough only for a target that answers within it: the primary's
// first-byte budget is longer than the whole deadline, so it fails over.
func TestRetryWhoseTargetNeedsMoreThanIsLeftFailsOver(t *testing.T) {
	b := setup(t, race.Route{Deadline: 30 * time.Second},
		provSpec{name: "primary", maxRetries: 1, firstByte: time.Minute, respond: lateRetry(100 * time.Millisecond)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil {
		t.Fatalf("job %s (%v), attempts %+v: want it won by the fallback", j.State, derefString(j.Error), j.Attempts)
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want once (no retry)", n)
	}
}

// A retry with room enough is made as before: the primary answers it.
func TestRetryWithRoomBeforeTheDeadlineIsMade(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Minute},
		provSpec{name: "primary", maxRetries: 1, firstByte: time.Second, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 429, RetryAfter: 10 * time.Millisecond}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[1].Provider != "primary" || j.Attempts[1].State != store.AttemptWon {
		t.Fatalf("job %s, attempts %+v: want the primary's retry to win", j.State, j.Attempts)
	}
}

// With no target left to fail over to, the retry is still the job's only
// chance: it is made, and the deadline decides. (Here the retry answers, so
// that the test does not wait for the deadline: the retry's room is less
// than the primary's first-byte budget whatever it does.)
func TestRetryWithNoRoomAndNoFallbackIsStillMade(t *testing.T) {
	b := setup(t, race.Route{Deadline: 30 * time.Second},
		provSpec{name: "primary", maxRetries: 1, firstByte: time.Minute, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 429, RetryAfter: 100 * time.Millisecond}
			}
			return providers.Step{Output: validTriage}
		}})
	j := b.waitSettled(t, b.submit(t).ID)
	if n := b.prov["primary"].Calls(); n != 2 {
		t.Fatalf("primary called %d times (job %s, %v), want the retry made", n, j.State, derefString(j.Error))
	}
	if strings.Contains(derefString(j.Error), "not retried") {
		t.Fatalf("job error %q: want the retry made", derefString(j.Error))
	}
}
