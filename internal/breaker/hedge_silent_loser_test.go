package breaker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// hedgedRoute hedges after 300ms, with a hedge budget, as a route does by
// default.
var hedgedRoute = race.Route{HedgeAfter: 300 * time.Millisecond, HedgeBudgetMin: 3, HedgeBudgetPercent: 10}

// A primary that accepts every request and never answers, on a route that
// hedges: each job's hedge on the fallback wins and the silent primary is
// cut as a loser. It used to be excluded from the breaker's counts (a
// cancelled loser), so the breaker stayed closed for ever and every job went
// to the dead primary first. A loser that had had no response byte for the
// hedge delay it caused is its target's failure. Found by review.
func TestBlackholedPrimaryWithHedgingOpens(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 2, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, hedgedRoute, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "fallback", respond: ok(validTriage)})
	var seen []string
	for range 6 {
		j := b.waitSettled(t, b.submit(t).ID)
		if j.State != store.JobSucceeded {
			t.Fatalf("job %s, want succeeded on the fallback", j.State)
		}
		seen = append(seen, j.Attempts[0].Provider+" "+j.Attempts[0].State)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" && s.State != breaker.StateOpen {
			t.Fatalf("after 6 jobs whose silent primary was rescued by a hedge, the primary's breaker is %s (counts %+v; first attempts %v)",
				s.State, s.Counts, seen)
		}
	}
	j := b.waitSettled(t, b.submit(t).ID)
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "fallback" {
		t.Fatalf("with the primary's breaker open, a job made attempts %+v, want one on the fallback", j.Attempts)
	}
}

// The silent primary's attempt says why its breaker counted it.
func TestSilentHedgeLoserIsMarkedCounted(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 5, OpenFor: time.Minute}}, breaker.Options{})
	defer set.Close()
	adm := &watchedAdmission{Set: set, provider: "primary", released: make(chan race.Outcome, 16)}
	b := setupRace(t, hedgedRoute, adm, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "fallback", respond: ok(validTriage)})
	id := b.submit(t).ID
	b.waitSettled(t, id)
	if o := <-adm.released; o != race.OutcomeFailure { // recorded before it is released
		t.Fatalf("the silent loser was reported %v, want a failure", o)
	}
	p := b.Job(t, id).Attempts[0]
	if p.Provider != "primary" || p.State != store.AttemptCancelled {
		t.Fatalf("first attempt %s %s, want the primary cancelled", p.Provider, p.State)
	}
	var e struct {
		Breaker string `json:"breaker"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(p.Error, &e); err != nil || e.Breaker != "failure" || !strings.Contains(e.Message, "no response byte") {
		t.Fatalf("the silent loser's error %s does not say its breaker counted it as a failure, and why", p.Error)
	}
}

// Half-open, the breaker sends one probe; a probe that never answers and is
// cut by its job's hedge used to give its slot back uncounted, so the breaker
// stayed half-open and every job probed the dead primary first. It opens
// again. The outcome each primary attempt reported is watched on the
// admission, so the breaker is read right after the probe's end, not polled.
func TestSilentHalfOpenProbeReopensBreaker(t *testing.T) {
	changes := make(chan breaker.Change, 64)
	set := breaker.New(map[string]breaker.Settings{
		"primary": {ConsecutiveFailures: 2, OpenFor: 500 * time.Millisecond},
	}, breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	defer set.Close()
	adm := &watchedAdmission{Set: set, provider: "primary", released: make(chan race.Outcome, 16)}
	b := setupRace(t, hedgedRoute, adm, nil,
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call <= 2 {
				return providers.Step{Status: 503}
			}
			return providers.Step{Hang: true}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	for range 2 {
		b.waitSettled(t, b.submit(t).ID)
		if o := <-adm.released; o != race.OutcomeFailure {
			t.Fatalf("a 503 was reported %v, want a failure", o)
		}
	}
	waitChange(t, changes, "primary", breaker.StateOpen)
	waitChange(t, changes, "primary", breaker.StateHalfOpen)
	probes := 0
	for i := range 5 {
		j := b.waitSettled(t, b.submit(t).ID)
		if j.State != store.JobSucceeded {
			t.Fatalf("job %d: %s, want succeeded on the fallback", i, j.State)
		}
		if j.Attempts[0].Provider != "primary" {
			continue // the breaker is open again: the fallback
		}
		probes++
		if o := <-adm.released; o != race.OutcomeFailure {
			t.Fatalf("job %d: the silent probe cut by its hedge was reported %v, want a failure", i, o)
		}
		// The probe's failure reopened the breaker before its release
		// returned (OnChange is called under the breaker's lock).
		if last, ok := lastChange(changes); !ok || last.From != breaker.StateHalfOpen || last.To != breaker.StateOpen {
			t.Fatalf("job %d: after its probe was silent past its hedge and cut, the breaker is %s (last change %+v), want reopened",
				i, snapshotOf(set, "primary").State, last)
		}
	}
	if probes == 0 {
		t.Fatal("no job probed the half-open primary")
	}
}

// lastChange is the last change buffered on changes, without waiting.
func lastChange(changes <-chan breaker.Change) (last breaker.Change, ok bool) {
	for {
		select {
		case c := <-changes:
			last, ok = c, true
		default:
			return last, ok
		}
	}
}

// watchedAdmission is a breaker Set whose releases of provider's attempts
// report the outcome on released (after the breaker has taken it).
type watchedAdmission struct {
	*breaker.Set
	provider string
	released chan race.Outcome
}

func (w *watchedAdmission) Admit(provider string) (func(race.Outcome), bool, string) {
	rel, ok, why := w.Set.Admit(provider)
	if !ok || provider != w.provider {
		return rel, ok, why
	}
	return func(o race.Outcome) {
		rel(o)
		w.released <- o
	}, true, ""
}

func snapshotOf(set *breaker.Set, provider string) breaker.Status {
	for _, s := range set.Snapshot() {
		if s.Provider == provider {
			return s
		}
	}
	return breaker.Status{}
}
