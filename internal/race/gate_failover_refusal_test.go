package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// goesStaleGate is a conformance gate that allows every target until stale
// is set, then refuses the fallback as the gate refuses a target whose last
// pass has aged out: a refusal found only at failover time, after the plan
// had found the fallback eligible.
type goesStaleGate struct{ stale atomic.Bool }

const staleWhy = "last pass is 8d old (conformance.max_age is 7d; run `router conformance run --provider fallback --prompt triage`)"

func (g *goesStaleGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "fallback" && g.stale.Load() {
		return false, staleWhy
	}
	return true, ""
}

// A target the conformance gate refused at failover time (eligible at the
// plan, its run gone stale since) was said in the job's error to be
// "skipped: last pass is …" without the target's name, which every other
// reason carries; and the job's routing still said it was eligible, so
// next_step (which reads the gate's refusals from routing) could not name
// it. The reason now names the target, and routing's one decision of it says
// it is ineligible, with the gate's reason, as a refusal at the plan does.
func TestGateRefusalAtFailoverNamesTheTargetInErrorAndRouting(t *testing.T) {
	gate := &goesStaleGate{}
	b := racetest.New(t, racetest.Options{Gate: gate, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			gate.stale.Store(true) // the fallback's run ages out while the primary works
			return providers.Step{Status: 500}
		}},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobFailed || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("set-up: job %s with attempts %+v; want failed after the primary's only (the fallback gated)", j.State, j.Attempts)
	}
	why := derefString(j.Error)
	if !strings.Contains(why, "fallback: skipped: "+staleWhy) {
		t.Errorf("job error %q does not say %q", why, "fallback: skipped: "+staleWhy)
	}
	var decisions []race.Decision
	if err := json.Unmarshal(j.Routing, &decisions); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	var of []race.Decision
	for _, d := range decisions {
		if d.Provider == "fallback" && d.Event == "" {
			of = append(of, d)
		}
	}
	if len(of) != 1 || of[0].Eligible || of[0].Reason != staleWhy {
		t.Errorf("routing %s: the fallback's decisions %+v, want exactly one, ineligible with the gate's reason %q", j.Routing, of, staleWhy)
	}
}

// refuseOnceGate refuses the fallback once, at the first ask after armed is
// set (a failed read of its results, say), and closes refused then; every
// other ask is allowed.
type refuseOnceGate struct {
	armed   atomic.Bool
	asked   atomic.Bool
	refused chan struct{}
}

const unreadableWhy = "cannot read conformance results for triage@2 (connection reset)"

func (g *refuseOnceGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "fallback" && g.armed.Load() && g.asked.CompareAndSwap(false, true) {
		close(g.refused)
		return false, unreadableWhy
	}
	return true, ""
}

// A gate refusal that passes (the gate allows the target at a later ask, and
// it is tried) does not stay in routing: the target's decision is the plan's
// again, eligible, rather than say the gate kept out a target that took the
// request. Here the fallback's hedge is refused, then its failover allowed.
func TestGateRefusalThatPassesLeavesThePlansDecision(t *testing.T) {
	gate := &refuseOnceGate{refused: make(chan struct{})}
	b := racetest.New(t, racetest.Options{Gate: gate, Route: race.Route{HedgeAfter: time.Millisecond, MaxInflight: 2},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
				gate.armed.Store(true)
				<-gate.refused // the hedge asked for the fallback and was refused
				return providers.Step{Status: 500}
			}},
			{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[1].Provider != "fallback" {
		t.Fatalf("set-up: job %s with attempts %+v; want succeeded by the fallback's failover after the primary's failure", j.State, j.Attempts)
	}
	var decisions []race.Decision
	if err := json.Unmarshal(j.Routing, &decisions); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	for _, d := range decisions {
		if d.Event == "" && (!d.Eligible || d.Reason != "") {
			t.Errorf("routing %s: decision %+v, want every target eligible as the plan found it", j.Routing, d)
		}
	}
}
