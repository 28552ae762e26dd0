package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// failsAfter answers every call with a 500 (a failure the race fails over
// on) after latency.
func failsAfter(latency time.Duration) func(int, *providers.Request) providers.Step {
	return func(int, *providers.Request) providers.Step {
		return providers.Step{Latency: latency, Status: 500}
	}
}

// A failover was sent however little of the job's deadline was left: with a
// 2 s deadline and a primary answering 500 after 1.3 s, the fallback was
// called with at most 0.7 s left, the deadline cut it before any response
// byte, and a job that would have failed knowably ended `unknown` (a 504
// outcome_unknown for a chat caller, an operator's resolution, a paid call
// that could not answer in time). A failover now needs the floor a retry
// needs (1 s) before the deadline, else it is not sent and the job fails
// saying why. Whatever the scheduling, at most 2 s − 1.3 s = 0.7 s is left
// when the primary's failure arrives, below the floor: no timing threshold.
// (The primary's call has 0.7 s to start before the deadline would cut it.)
// Found by review.
func TestFailoverWithNoRoomBeforeTheDeadlineIsNotSent(t *testing.T) {
	b := setup(t, race.Route{Deadline: 2 * time.Second},
		provSpec{name: "primary", respond: failsAfter(1300 * time.Millisecond)},
		// A fallback that would answer, but not within what is left.
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }})
	j := b.waitSettled(t, b.submit(t).ID)
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Fatalf("fallback called %d times (job %s, %v): want no failover sent with less than the floor left", n, j.State, derefString(j.Error))
	}
	if j.State != store.JobFailed {
		t.Fatalf("job %s (%v), attempts %+v: want it failed, not left unknown", j.State, derefString(j.Error), j.Attempts)
	}
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" || j.Attempts[0].State != store.AttemptFailed {
		t.Fatalf("attempts %+v: want the primary's failure alone", j.Attempts)
	}
	msg := derefString(j.Error)
	for _, want := range []string{"left no room for a failover to fallback", "deadline of 2s", "at least 1s needed", ".deadline"} {
		if !strings.Contains(msg, want) {
			t.Errorf("job error %q: want it to say %q", msg, want)
		}
	}
	routing := string(j.Routing)
	if !strings.Contains(routing, `"failover_no_room"`) || !strings.Contains(routing, "left no room for a failover to fallback") {
		t.Errorf("routing %s: want the failover refused for want of room recorded", routing)
	}
}

// The control: the same route, a primary failing at once, and the failover is
// sent and wins (the deadline is long enough that scheduling cannot eat the
// floor).
func TestFailoverWithRoomBeforeTheDeadlineIsSent(t *testing.T) {
	b := setup(t, race.Route{Deadline: 30 * time.Second},
		provSpec{name: "primary", respond: failsAfter(0)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || b.prov["fallback"].Calls() != 1 {
		t.Fatalf("job %s (%v), attempts %+v, fallback called %d times: want the failover sent and won",
			j.State, derefString(j.Error), j.Attempts, b.prov["fallback"].Calls())
	}
	if strings.Contains(string(j.Routing), "failover_no_room") {
		t.Fatalf("routing %s: want no failover refused", j.Routing)
	}
}
