package race_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// switchable is a breaker stand-in whose providers in open are refused (by
// Admit and by State, as breaker.Set's are) and say they admit again in a
// minute; admit closes a provider's breaker (its open_for passed).
type switchable struct {
	mu   sync.Mutex
	open map[string]bool
}

func (a *switchable) isOpen(p string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open[p]
}

func (a *switchable) admit(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.open, p)
}

func (a *switchable) Admit(p string) (func(race.Outcome), bool, string) {
	if a.isOpen(p) {
		return nil, false, "circuit breaker open after 5 consecutive failures; probing again in 1m0s"
	}
	return func(race.Outcome) {}, true, ""
}

func (a *switchable) State(p string) (bool, string) {
	if a.isOpen(p) {
		return false, "circuit breaker open after 5 consecutive failures; probing again in 1m0s"
	}
	return true, ""
}

func (a *switchable) AdmitsIn(p string) (time.Duration, bool) {
	if a.isOpen(p) {
		return time.Minute, true
	}
	return 0, true
}

// SPEC §6.3: the race fails over to the next *eligible* provider when the
// current one fails definitively. A target whose breaker was open when the
// job's routing was decided is dropped from the job's candidates for the
// whole run: when the breaker admits again while another target's attempt
// runs (its open_for passed, it half-opened), the job still fails when that
// attempt fails, its untried primary — which would admit it now — never
// asked. (waitForBreakers only looks at targets refused in choose, not at
// those refused by decide.)
func TestFailsOverToATargetWhoseBreakerReopenedDuringTheRun(t *testing.T) {
	adm := &switchable{open: map[string]bool{"primary": true}}
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			adm.admit("primary") // the primary's breaker admits again while the fallback works
			return providers.Step{Status: 500}
		}})
	j := b.waitSettled(t, b.submit(t).ID)
	if len(j.Attempts) == 0 || j.Attempts[0].Provider != "fallback" {
		t.Fatalf("set-up: attempts %+v; want the fallback first (the primary's breaker open at the plan)", j.Attempts)
	}
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, error %q, attempts %d: want the race to fail over to the primary, whose breaker admits "+
			"when the fallback fails, not to fail the job", j.State, derefString(j.Error), len(j.Attempts))
	}
	if why := derefString(j.Error); strings.Contains(why, "skipped") {
		t.Fatalf("error %q", why)
	}
}

// The same gap with hedging: a target refused by its breaker when the job's
// routing was decided is never hedged to, even once its breaker admits. The
// fallback (first, the primary's breaker open at the plan) goes silent; the
// primary's breaker admits from the moment the fallback is called; the hedge
// delay (20 ms) passes with nothing else to hedge to but the primary. The
// job is not rescued by a hedge: it waits out the fallback's first-byte
// budget and ends with an unknown attempt (SPEC §6.7 blocks it), while a
// healthy target would have answered.
func TestHedgesToATargetWhoseBreakerAdmitsAgain(t *testing.T) {
	adm := &switchable{open: map[string]bool{"primary": true}}
	b := setupWith(t, race.Route{HedgeAfter: 20 * time.Millisecond, Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", firstByte: 2 * time.Second, timeout: 5 * time.Second, respond: func(int, *providers.Request) providers.Step {
			adm.admit("primary") // the primary's breaker admits again as the fallback starts
			return providers.Step{Hang: true}
		}})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		var states []string
		for _, a := range j.Attempts {
			states = append(states, a.Provider+"="+a.State+"/"+a.Role)
		}
		t.Fatalf("job %s (%s), attempts %v: want a hedge on the primary (its breaker admits) to win", j.State, derefString(j.Error), states)
	}
}
