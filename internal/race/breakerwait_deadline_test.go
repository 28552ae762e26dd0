package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// halfOpenAll is a circuit breaker set whose every breaker is half-open with
// its probes taken: it refuses every target, its state shown to routing, and
// says not when it admits again (a probe ends within moments).
type halfOpenAll struct{}

func (halfOpenAll) Admit(string) (func(race.Outcome), bool, string) {
	return nil, false, "circuit breaker half-open, probe in flight"
}

func (halfOpenAll) State(string) (bool, string) {
	return false, "circuit breaker half-open, probe in flight"
}

func (halfOpenAll) AdmitsIn(string) (time.Duration, bool) { return 0, false }

// A job that waits for its circuit breakers until its deadline passes fails
// by its deadline whichever path sees the deadline pass: the race under way
// (waitForBreakers: its stop's reason comes first in the error) or, as here,
// the run after the wait that finds the breakers still refusing (prepare).
// The latter's error began with "no eligible provider …", the deadline's
// sentence last, so FailedByDeadline did not see it and a chat call got 502
// upstream_failed rather than 504 deadline_exceeded (docs/chat.md).
func TestBreakerWaitPastTheDeadlineFailsByTheDeadline(t *testing.T) {
	b := setupWith(t, race.Route{Deadline: 300 * time.Millisecond}, halfOpenAll{},
		provSpec{name: "primary", respond: ok(validTriage)})
	j := b.waitSettled(t, b.SubmitUnplanned(t).ID)
	why := deref(j.Error)
	if j.State != store.JobFailed || len(j.Attempts) != 0 || !strings.Contains(why, "passed while it waited for a circuit breaker") {
		t.Fatalf("set-up: job %s with %d attempts (error %q); want failed with no attempt, its deadline passed while it waited for the breaker",
			j.State, len(j.Attempts), why)
	}
	if d, ok := race.FailedByDeadline(j); !ok || d != "300ms" {
		t.Fatalf("error %q: FailedByDeadline = %q, %v; want the job failed by its deadline of 300ms (a chat call's 504)", why, d, ok)
	}
}
