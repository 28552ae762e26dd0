package ops

import (
	"context"
	"slices"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
)

// refusingGate refuses every ask for want of a pass, as conformance.Gate
// does for a target never run.
type refusingGate struct{}

func (refusingGate) Mode() string             { return "fallbacks" }
func (refusingGate) Applies(role string) bool { return role != "primary" }
func (refusingGate) AllowModels(_ context.Context, asks []race.GateAsk) []race.GateAnswer {
	out := make([]race.GateAnswer, len(asks))
	for i, a := range asks {
		out[i] = race.GateAnswer{Reason: "no passing conformance run for " + a.Prompt.Name + "@" + a.Prompt.Version}
	}
	return out
}

// POST /v1/jobs takes any configured route in `route`, and the gate judges
// that route's fallbacks for the job's prompt. GET /v1/providers listed a
// route's fallbacks only for the prompts whose manifest names the route (and
// its conformance_prompt), so a "bulk" route callers send triage jobs to had
// its fallback refused with no entry at all. It now lists every prompt on
// every route, the jobs naming the route marked prompt_by_request.
func TestProvidersGateListsPromptsJobsMayNameTheRouteFor(t *testing.T) {
	ps, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	byProvider, status := gateEntries(context.Background(), Config{
		Gate: refusingGate{},
		GateRoutes: []GateRoute{
			{Name: "default", Targets: []string{"g-primary", "g-fallback"}},
			{Name: "bulk", Targets: []string{"b-primary", "b-fallback"}},
		},
	}, ps)
	if status != "" {
		t.Fatalf("status %q", status)
	}
	var got []string
	for _, e := range byProvider["b-fallback"] {
		got = append(got, e.Route+" "+e.Prompt+" "+e.Jobs)
		if e.Admitted || e.Role != "failover" || e.Command != "router conformance run --provider b-fallback --prompt "+e.Prompt {
			t.Errorf("b-fallback: %+v; want refused as a failover, with the command that admits it", e)
		}
	}
	want := []string{"bulk invoice prompt_by_request", "bulk triage prompt_by_request"}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("b-fallback's gate entries: %q; want %q (the prompts whose jobs may name route bulk)", got, want)
	}
	// The prompts' own route keeps its "prompt" entries.
	for _, e := range byProvider["g-fallback"] {
		if e.Route != "default" || e.Jobs != JobsPrompt {
			t.Errorf("g-fallback: %+v; want the entries of prompts whose route is default, jobs prompt", e)
		}
	}
	if len(byProvider["g-fallback"]) != 2 || len(byProvider["b-primary"]) != 0 {
		t.Errorf("entries: %+v; want g-fallback's two and none for a primary", byProvider)
	}
}
