package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// wordedGate refuses the fallback, once refusing is set, with why: a gate
// whose words next_step cannot guess, as only the marker says a gate refused.
type wordedGate struct {
	refusing atomic.Bool
	why      string
}

func (g *wordedGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "fallback" && g.refusing.Load() {
		return false, g.why
	}
	return true, ""
}

// decisionOf is the one decision (not an event) of routing on provider.
func decisionOf(t *testing.T, j *store.Job, provider string) race.Decision {
	t.Helper()
	var decisions []race.Decision
	if err := json.Unmarshal(j.Routing, &decisions); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	var of []race.Decision
	for _, d := range decisions {
		if d.Provider == provider && d.Event == "" {
			of = append(of, d)
		}
	}
	if len(of) != 1 {
		t.Fatalf("routing %s: %d decisions of %s, want one", j.Routing, len(of), provider)
	}
	return of[0]
}

// A target the conformance gate refused was known to next_step (and to a
// failed chat call's 502) only by its reason naming conformance: the gate's
// refusal is now marked in routing (Decision.Cause, conformance_gate), at the
// plan and when the gate refuses it later, at failover time, so that it is
// named whatever the gate's words.
func TestGateRefusalIsMarkedInRouting(t *testing.T) {
	const why = "no fresh passing run of triage@2: run the suite on it" // does not say "conformance"
	for _, when := range []string{"plan", "failover"} {
		t.Run(when, func(t *testing.T) {
			gate := &wordedGate{why: why}
			gate.refusing.Store(when == "plan")
			b := racetest.New(t, racetest.Options{Gate: gate, Providers: []racetest.Provider{
				{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
					gate.refusing.Store(true) // at failover time: the gate refuses it once the primary runs
					return providers.Step{Status: 500}
				}},
				{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			if j.State != store.JobFailed || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
				t.Fatalf("set-up: job %s with attempts %+v; want failed after the primary's only (the fallback gated)", j.State, j.Attempts)
			}
			if d := decisionOf(t, j, "fallback"); d.Eligible || d.Reason != why || d.Cause != race.CauseConformanceGate {
				t.Errorf("routing %s: the fallback's decision %+v, want ineligible with the gate's reason and cause %q", j.Routing, d, race.CauseConformanceGate)
			}
			if d := decisionOf(t, j, "primary"); d.Cause != "" {
				t.Errorf("routing %s: the eligible primary's decision has cause %q, want none", j.Routing, d.Cause)
			}
			if got, want := race.GatedTargets(j), []string{"fallback: " + why}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("GatedTargets = %q, want %q", got, want)
			}
			if step := race.NextStep(j); !strings.Contains(step, "conformance gate") || !strings.Contains(step, "fallback: "+why) {
				t.Errorf("next_step %q does not say that the conformance gate skipped the fallback (%s)", step, why)
			}
		})
	}
}

// A target ineligible for another reason whose words name conformance — here
// a window too small beside a target named conformance-lab that rejected the
// request as too long — is not one the gate skipped: next_step read it as one
// (a reason naming conformance), telling the caller that a retry would be
// gated until a `router conformance run` that nothing needs. The decision's
// cause says context_window.
func TestTargetNamedConformanceIneligibleByWindowIsNotGated(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "conformance-lab", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindContextLength, StatusCode: 400, Message: "maximum context length exceeded"}}
		}, ContextWindow: 128000},
		{Name: "small", Respond: racetest.OK(racetest.ValidTriage), ContextWindow: 64000},
		{Name: "big", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }, ContextWindow: 1000000},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobFailed || racetest.AttemptOn(j, "small") != nil || racetest.AttemptOn(j, "big") == nil {
		t.Fatalf("set-up: job %s with attempts %+v; want failed after conformance-lab's and big's attempts, small skipped", j.State, j.Attempts)
	}
	d := decisionOf(t, j, "small")
	if d.Eligible || !strings.Contains(d.Reason, "conformance-lab rejected the request as too long") || d.Cause != race.CauseContextWindow {
		t.Fatalf("routing %s: small's decision %+v, want ineligible for conformance-lab's rejection, cause %q", j.Routing, d, race.CauseContextWindow)
	}
	if gated := race.GatedTargets(j); len(gated) != 0 {
		t.Errorf("GatedTargets = %q, want none: the gate refused nothing", gated)
	}
	if step := race.NextStep(j); strings.Contains(step, "conformance gate") || !strings.Contains(step, "/retry") {
		t.Errorf("next_step %q: want the retry advice, without the conformance gate", step)
	}
}

// Routing stored by a router from before Decision.Cause has no cause on any
// decision: a gate's refusal there is still known by its reason, as that
// router read it; a decision with a cause is read by it alone.
func TestGatedTargetsOfRoutingWithoutCauses(t *testing.T) {
	job := func(routing string) *store.Job {
		return &store.Job{ID: "0190a23b-58d9-7d14-b84d-99dabf56969c", State: store.JobFailed, Routing: json.RawMessage(routing)}
	}
	for _, c := range []struct {
		name, routing string
		want          string
	}{
		{"older router's gate refusal", `[{"provider":"p","eligible":true},{"provider":"f","eligible":false,"reason":"no passing conformance run for triage@2"}]`,
			"f: no passing conformance run for triage@2"},
		{"older router's breaker", `[{"provider":"p","eligible":true},{"provider":"f","eligible":false,"reason":"circuit breaker open"}]`, ""},
		{"gate cause", `[{"provider":"f","eligible":false,"reason":"stale","cause":"conformance_gate"}]`, "f: stale"},
		{"breaker cause naming conformance", `[{"provider":"f","eligible":false,"reason":"circuit breaker open (the breaker of the model sent, conformance-x/m)","cause":"breaker"}]`, ""},
		{"event", `[{"provider":"f","event":"hedge_denied","eligible":true,"reason":"conformance"}]`, ""},
	} {
		if got := strings.Join(race.GatedTargets(job(c.routing)), "|"); got != c.want {
			t.Errorf("%s: GatedTargets = %q, want %q", c.name, got, c.want)
		}
	}
}
