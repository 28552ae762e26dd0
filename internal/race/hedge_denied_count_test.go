package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// hedgeAskGate is a conformance gate that allows everything and counts the
// times it is asked from the hedge timer (hedgeDue), which asks it for the
// hedge's target just before it asks the route's hedge budget: a hedge
// denied and asked again shows up here once per try.
type hedgeAskGate struct {
	n     atomic.Int64
	asked chan struct{} // a wake-up after each count (at most one pending)
}

func (g *hedgeAskGate) AllowModel(context.Context, string, string, *prompt.Prompt, string) (bool, string) {
	if calledFrom(".(*orchestrator).hedgeDue") {
		g.n.Add(1)
		select {
		case g.asked <- struct{}{}:
		default: // a wake-up is pending: its reader sees this count too
		}
	}
	return true, ""
}

// waitFor returns once the gate has been asked n times from the hedge timer.
func (g *hedgeAskGate) waitFor(n int64) {
	for g.n.Load() < n {
		<-g.asked
	}
}

// One job wanting one hedge while the budget is held is one denial: its
// routing records it once, and router_hedges_denied_total (the observer's
// HedgeDenied) counts it once — not once per hedge delay while its primary
// stays silent and the hedge is asked for again. (Found in review: the
// counter grew by one every hedge delay, so a silence of a minute with a one
// second delay counted one denied hedge 60 times.)
func TestDeniedHedgeAskedAgainIsCountedOnce(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	firstHedge := make(chan struct{})
	obs := &denials{denied: make(chan string, 1000)}
	gate := &hedgeAskGate{asked: make(chan struct{}, 1)}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 10 * time.Millisecond, HedgeBudgetMin: 1},
		Observer: obs, Gate: gate,
		Providers: []racetest.Provider{
			{Name: "primary", Respond: hang},
			{Name: "fallback", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 { // job 1's hedge holds the budget until release
					once.Do(func() { close(firstHedge) })
					<-release
				}
				return providers.Step{Output: validTriage}
			}},
		}})
	j1 := b.Submit(t)
	<-firstHedge
	// Job 1 has hedged: both its targets are used, so its hedge timer asks
	// the gate no more. Every ask from now on is job 2's.
	j2 := b.Submit(t)
	<-obs.denied // job 2's hedge denied, the first time
	// Two more tries of job 2's hedge after the one counted in base: the
	// first of them was denied before the second asks the gate (one
	// goroutine runs a job's race), so the budget denied job 2's hedge at
	// least twice before release.
	base := gate.n.Load()
	gate.waitFor(base + 2)
	close(release)
	for _, id := range []string{j1.ID, j2.ID} {
		if j := b.WaitSettled(t, id); j.State != store.JobSucceeded {
			t.Fatalf("job %s: %s, attempts %s", id, j.State, attemptsOf(j))
		}
	}
	var routing []race.Decision
	if err := json.Unmarshal(b.Job(t, j2.ID).Routing, &routing); err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, d := range routing {
		if d.Event == "hedge_denied" {
			recorded++
		}
	}
	counted := 1 + len(obs.denied)
	if recorded != 1 || counted != recorded {
		t.Fatalf("job 2's one hedge, denied at least twice while job 1's hedge held the budget: routing records %d denial(s), "+
			"router_hedges_denied_total counted %d; want both 1", recorded, counted)
	}
}
