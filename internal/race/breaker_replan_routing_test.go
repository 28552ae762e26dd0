package race_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// trip opens provider p's breaker (its attempt's failure tripped it).
func (a *switchable) trip(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.open[p] = true
}

// A job whose failover its fallback's open breaker refused waits for that
// breaker and is run again (re-planned). The re-plan's routing used to
// replace the job's: the primary, whose attempt 1 ran (and opened its breaker
// by failing), became "eligible": false for its breaker, and the fallback's
// breaker_refused event was gone — routing no longer explained the attempts
// that ran. The decision an attempt ran under is kept; the re-plan updates
// only the targets not tried (the fallback, eligible now) and adds to the
// events.
func TestReplanKeepsTheRoutingOfTheAttemptsThatRan(t *testing.T) {
	adm := newCountingSwitch("fallback", 20*time.Millisecond)
	adm.reopenAfter["fallback"] = 1 // the failover's ask is refused, the next run's admitted
	delete(adm.open, "fallback")    // closed at the plan: the primary's failure opens both
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			adm.trip("primary")
			adm.trip("fallback")
			return providers.Step{Status: 500}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[0].Provider != "primary" || j.Attempts[1].Provider != "fallback" {
		t.Fatalf("set-up: job %s (%s), attempts %+v: want the primary's failure, then the fallback's win after a wait for its breaker",
			j.State, derefString(j.Error), j.Attempts)
	}
	var ds []race.Decision
	if err := json.Unmarshal(j.Routing, &ds); err != nil {
		t.Fatal(err)
	}
	var primary, fallback, refused int
	for _, d := range ds {
		switch {
		case d.Event == "breaker_refused" && d.Provider == "fallback":
			refused++
		case d.Event != "":
		case d.Provider == "primary" && d.Eligible && d.Reason == "":
			primary++
		case d.Provider == "fallback" && d.Eligible && d.Reason == "":
			fallback++
		default:
			t.Fatalf("routing %s: decision %+v; want the primary eligible (its attempt ran so), the fallback eligible (admitted at the re-plan)", j.Routing, d)
		}
	}
	if primary != 1 || fallback != 1 || refused != 1 {
		t.Fatalf("routing %s: want one eligible decision each for the primary and the fallback, and the fallback's breaker_refused event "+
			"of the run that waited for it", j.Routing)
	}
}
