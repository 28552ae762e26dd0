package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// refuseOnce refuses provider p's first Admit (closing refused then) and
// admits everything else; its breakers' states admit, and say they admit
// now (AdmitDelay).
type refuseOnce struct {
	mu      sync.Mutex
	p       string
	done    bool
	refused chan struct{}
}

func newRefuseOnce(p string) *refuseOnce { return &refuseOnce{p: p, refused: make(chan struct{})} }

func (a *refuseOnce) State(string) (bool, string) { return true, "" }

func (a *refuseOnce) AdmitsIn(string) (time.Duration, bool) { return 0, true }

func (a *refuseOnce) Admit(p string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p == a.p && !a.done {
		a.done = true
		close(a.refused)
		return nil, false, "circuit breaker half-open: its one probe is taken"
	}
	return func(race.Outcome) {}, true, ""
}

// A hedge refused by the fallback's breaker used to mark the fallback tried
// for the whole round: when the silent primary then failed, the failover
// found nothing left and the job failed, the fallback never called although
// its breaker admitted by then. The refusal skips the fallback for that hedge
// only. The primary fails once the hedge was refused (no timing decides it).
func TestHedgeRefusedByBreakerLeavesTheFallbackForTheFailover(t *testing.T) {
	adm := newRefuseOnce("fallback")
	b := setupWith(t, race.Route{HedgeAfter: 20 * time.Millisecond, Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-adm.refused // silent until the hedge was refused
			return providers.Step{Status: 500}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%s), %d attempts: the fallback, refused once by its breaker at hedge time, was never tried as the failover",
			j.State, derefString(j.Error), len(j.Attempts))
	}
	if n := len(j.Attempts); n != 2 || j.Attempts[1].Provider != "fallback" || j.Attempts[1].Role != store.RoleFailover {
		t.Fatalf("attempts %+v: want the primary's, then the fallback's failover", j.Attempts)
	}
}

// A job run (here an unplanned one, as adopted or resumed) whose only target
// its breaker refuses at Admit although its state admitted a moment before
// used to fail at once with no attempt. As when the breaker's state refuses
// it (prepare), the job waits for the breaker and runs again.
func TestRunRefusedOnlyByBreakersWaitsForThem(t *testing.T) {
	adm := newRefuseOnce("primary")
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm, provSpec{name: "primary", respond: ok(validTriage)})
	j := b.waitSettled(t, b.SubmitUnplanned(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("job %s (%s), attempts %+v: a breaker's momentary refusal failed the job instead of a wait for it",
			j.State, derefString(j.Error), j.Attempts)
	}
}
