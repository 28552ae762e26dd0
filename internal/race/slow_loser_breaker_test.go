package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// quickHedge hedges after 100ms, with a hedge budget, as a route does.
var quickHedge = race.Route{HedgeAfter: 100 * time.Millisecond, HedgeBudgetMin: 3, HedgeBudgetPercent: 10}

// A primary that answers every call, in 1s (well inside its first-byte
// budget), on a route that hedges after 100ms to a faster fallback. Before
// anything is learned of the primary, its silent losers look like a black
// hole's and open its breaker (TestBlackholedPrimaryWithHedgingOpens needs
// that). Its half-open probe used to be hedged and cut as well, so the
// breaker opened again at every probe and never closed: the route's hedge
// timing became the target's health verdict (SPEC §10 excludes hedge
// losers' cancellations). The probe now runs to its answer and closes the
// breaker; its first byte is learned, and the primary's later silent losers
// are kept until it answers (twice its p95 time to first byte) instead of
// counted. Found by review.
func TestSlowHealthyPrimaryBreakerClosesDespiteHedging(t *testing.T) {
	adm, changes := watchedPrimary(t, breaker.Settings{ConsecutiveFailures: 3, OpenFor: 200 * time.Millisecond})
	b := setupWith(t, quickHedge, adm,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: time.Second, Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	run := func(what string) (first string, o race.Outcome) {
		t.Helper()
		j := b.waitSettled(t, b.submit(t).ID)
		if j.State != store.JobSucceeded || len(j.Attempts) == 0 {
			t.Fatalf("%s: job %s, want succeeded", what, j.State)
		}
		first = j.Attempts[0].Provider
		if first == "primary" {
			o = <-adm.released // after the primary's call has ended
		}
		return first, o
	}
	// Nothing learned yet: indistinguishable from a black hole.
	for i := range 3 {
		if first, o := run("unlearned"); first != "primary" || o != race.OutcomeFailure {
			t.Fatalf("job %d: first attempt on %s, outcome %v; want the primary's silent loser counted (nothing is learned of it yet)", i, first, o)
		}
	}
	waitStateChange(t, changes, breaker.StateOpen)
	waitStateChange(t, changes, breaker.StateHalfOpen)
	if first, o := run("probe"); first != "primary" || o != race.OutcomeSuccess {
		t.Fatalf("the half-open probe on %s ended %v (1=failure, 2=ignored): want it run to its answer after the hedge won, a success", first, o)
	}
	// The probe's success closed the breaker before its release returned
	// (OnChange is called under the breaker's lock).
	waitStateChange(t, changes, breaker.StateClosed)
	for i := range 3 {
		first, o := run("learned")
		if first != "primary" || o == race.OutcomeFailure {
			t.Fatalf("job %d after the probe: first attempt on %s, outcome %v; want the primary's slow loser not counted as a failure", i, first, o)
		}
	}
	if last, changed := lastStateChange(changes); changed {
		t.Fatalf("the breaker changed again (%+v): a healthy primary only slower than hedge_after", last)
	}
	for _, st := range adm.Snapshot() {
		if st.Provider == "primary" && st.State != breaker.StateClosed {
			t.Fatalf("primary's breaker %s (counts %+v), want closed", st.State, st.Counts)
		}
	}
}

// A primary that answered quickly and then goes silent is still counted at
// its hedge delay: having answered, it is expected within twice its p95 time
// to first byte, well before the hedge that rescues each job.
func TestFastPrimaryGoneSilentOpensWithHistory(t *testing.T) {
	adm, _ := watchedPrimary(t, breaker.Settings{ConsecutiveFailures: 2, OpenFor: time.Minute})
	b := setupWith(t, quickHedge, adm,
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Output: validTriage}
			}
			return providers.Step{Hang: true}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobSucceeded || j.Attempts[0].Provider != "primary" {
		t.Fatalf("the first job %s, want succeeded on the primary", j.State)
	}
	if o := <-adm.released; o != race.OutcomeSuccess {
		t.Fatalf("the primary's answer was reported %v", o)
	}
	for i := range 2 {
		if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobSucceeded {
			t.Fatalf("job %d: %s, want succeeded on the fallback", i, j.State)
		}
		if o := <-adm.released; o != race.OutcomeFailure {
			t.Fatalf("job %d: the silent primary's loser was reported %v, want a failure", i, o)
		}
	}
	j := b.waitSettled(t, b.submit(t).ID)
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "fallback" {
		t.Fatalf("with the primary's breaker open, a job made attempts %+v, want one on the fallback", j.Attempts)
	}
}

// watchedPrimary is a breaker set of the primary alone, with settings s:
// its state changes come on changes, and its releases of the primary's
// attempts report their outcomes on adm.released.
func watchedPrimary(t *testing.T, s breaker.Settings) (adm *outcomeWatch, changes chan breaker.Change) {
	changes = make(chan breaker.Change, 256)
	set := breaker.New(map[string]breaker.Settings{"primary": s}, breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	t.Cleanup(set.Close)
	return &outcomeWatch{Set: set, provider: "primary", released: make(chan race.Outcome, 256)}, changes
}

// outcomeWatch is a breaker Set whose releases of provider's attempts report
// the outcome on released (after the breaker has taken it).
type outcomeWatch struct {
	*breaker.Set
	provider string
	released chan race.Outcome
}

func (w *outcomeWatch) Admit(provider string) (func(race.Outcome), bool, string) {
	rel, ok, why := w.Set.Admit(provider)
	if !ok || provider != w.provider {
		return rel, ok, why
	}
	return func(o race.Outcome) {
		rel(o)
		w.released <- o
	}, true, ""
}

func waitStateChange(t *testing.T, changes <-chan breaker.Change, to string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	select {
	case c := <-changes:
		if c.To != to {
			t.Fatalf("breaker of %s went %s -> %s while waiting for %s", c.Provider, c.From, c.To, to)
		}
	case <-timeout:
		t.Fatalf("the breaker did not become %s", to)
	}
}

// lastStateChange is the last change buffered, without waiting.
func lastStateChange(changes <-chan breaker.Change) (last breaker.Change, ok bool) {
	for {
		select {
		case c := <-changes:
			last, ok = c, true
		default:
			return last, ok
		}
	}
}
