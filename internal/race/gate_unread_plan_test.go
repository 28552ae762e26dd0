package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// unreadGate refuses every target as the conformance gate does when it cannot
// read their results (race.GateUnread).
type unreadGate struct{}

func (unreadGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	return false, race.GateUnread + " for triage@3 (read conformance standing of " + provider + " on triage@3: timeout)"
}

// A target the gate refused at the plan only because it could not read its
// results stays a candidate of the job (asked again at failover), but it is
// not eligible for the plan: with every target so refused there is no job
// (the API's 503 no-eligible-provider), and routing says why of each.
func TestPlanWithEveryTargetUnreadHasNoEligibleTarget(t *testing.T) {
	b := racetest.New(t, racetest.Options{Gate: unreadGate{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	plan, routing, ok, err := b.Runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default",
		Input: json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)})
	if err != nil || ok || plan != nil {
		t.Fatalf("plan ok=%v err=%v plan=%v; want no eligible target (every one refused unread)", ok, err, plan)
	}
	var ds []race.Decision
	if err := json.Unmarshal(routing, &ds); err != nil || len(ds) != 2 {
		t.Fatalf("routing %s: %v", routing, err)
	}
	for _, d := range ds {
		if d.Eligible || d.Cause != race.CauseConformanceGate || !strings.HasPrefix(d.Reason, race.GateUnread) {
			t.Errorf("decision %+v; want the gate's unread refusal", d)
		}
	}
}

// When the gate admits at failover a target it refused at the plan only
// because it could not read its results, the job's routing says the target
// was eligible (the attempt that won ran there), not the plan's refusal.
func TestUnreadAtPlanAdmittedAtFailoverIsEligibleInRouting(t *testing.T) {
	b := racetest.New(t, racetest.Options{Gate: &unreadAtPlanGate{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s: %s", j.State, derefString(j.Error))
	}
	var ds []race.Decision
	if err := json.Unmarshal(j.Routing, &ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Event == "" && d.Provider == "fallback" && (!d.Eligible || d.Reason != "" || d.Cause != "") {
			t.Errorf("fallback's decision %+v after the gate admitted it at failover; want eligible", d)
		}
	}
}
