package breaker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// refusalWatch is a breaker Set that says on refused when its State refuses
// a provider (routing asks it, for each job it prepares).
type refusalWatch struct {
	*breaker.Set
	refused chan string
}

func (w *refusalWatch) State(provider string) (bool, string) {
	ok, why := w.Set.State(provider)
	if !ok {
		select {
		case w.refused <- why:
		default:
		}
	}
	return ok, why
}

// A job that starts without a plan (adopted, resumed, retried) while its
// target's breaker is half-open with its one probe in flight used to be
// failed at once, with no attempt, although the breaker would admit it a
// moment later. Only breakers refuse it: it waits for one to admit it, and
// runs. Found by review.
func TestUnplannedJobWaitsForAHalfOpenBreaker(t *testing.T) {
	changes := make(chan breaker.Change, 64)
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: 300 * time.Millisecond}},
		breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	defer set.Close()
	adm := &refusalWatch{Set: set, refused: make(chan string, 16)}
	probing := make(chan struct{})
	release := make(chan struct{})
	b := setupRace(t, race.Route{}, adm, nil, provSpec{name: "primary",
		respond: func(call int, _ *providers.Request) providers.Step {
			switch call {
			case 1:
				return providers.Step{Status: 503}
			case 2:
				close(probing)
				<-release
			}
			return providers.Step{Output: validTriage}
		}})
	if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobFailed {
		t.Fatalf("first job %s, want failed on the 503", j.State)
	}
	waitChange(t, changes, "primary", breaker.StateOpen)
	waitChange(t, changes, "primary", breaker.StateHalfOpen)
	probe := b.submit(t)
	<-probing
	drain(adm.refused)
	unplanned := b.SubmitUnplanned(t)
	var why string
	select {
	case why = <-adm.refused: // its routing found the breaker's one probe taken
	case <-time.After(time.Minute): // only to fail rather than hang
		t.Fatal("the job started while the probe was in flight never asked the breaker")
	}
	if !strings.Contains(why, "half-open") {
		t.Fatalf("refused with %q, want the half-open breaker's", why)
	}
	close(release)
	if j := b.waitSettled(t, probe.ID); j.State != store.JobSucceeded {
		t.Fatalf("probe job %s, want succeeded", j.State)
	}
	j := b.waitSettled(t, unplanned.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) == 0 {
		t.Fatalf("the job started while the probe was in flight ended %s with %d attempts (error %q); want it run once the breaker admitted it",
			j.State, len(j.Attempts), errorOf(j))
	}
}

// The wait is bounded by the route's deadline: a breaker that will not admit
// the job before it fails the job at once, naming the breaker and the
// deadline.
func TestUnplannedJobWaitingForABreakerFailsAtItsDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	changes := make(chan breaker.Change, 64)
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Minute}},
		breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	defer set.Close()
	b := setupRace(t, race.Route{Deadline: deadline}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }})
	if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobFailed {
		t.Fatalf("first job %s, want failed on the 503", j.State)
	}
	waitChange(t, changes, "primary", breaker.StateOpen)
	j := b.waitSettled(t, b.SubmitUnplanned(t).ID)
	if j.State != store.JobFailed || len(j.Attempts) != 0 || j.Error == nil ||
		!strings.Contains(*j.Error, "circuit breaker open") || !strings.Contains(*j.Error, "deadline") {
		t.Fatalf("job %s with %d attempts, error %q; want failed with no attempt, naming the open breaker and the deadline",
			j.State, len(j.Attempts), errorOf(j))
	}
}

func drain(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func errorOf(j *store.Job) string {
	if j.Error == nil {
		return ""
	}
	return *j.Error
}
