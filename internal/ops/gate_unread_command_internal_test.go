package ops

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
)

// unreadGate is a gate whose reads all fail: it refuses every target with
// race.GateUnread's reason, as conformance.Gate does when conformance_runs
// cannot be read in time.
type unreadGate struct{}

func (unreadGate) Mode() string             { return "failover" }
func (unreadGate) Applies(role string) bool { return true }
func (unreadGate) AllowModels(_ context.Context, asks []race.GateAsk) []race.GateAnswer {
	out := make([]race.GateAnswer, len(asks))
	for i := range out {
		out[i] = race.GateAnswer{Reason: race.GateUnread + " for triage@2 (context deadline exceeded)"}
	}
	return out
}

// A refusal because the gate could not read its results clears once the
// database answers: the operator view names no `router conformance run` to
// make for it (the pass may well exist), as it does for a missing pass.
func TestGateViewOffersNoRunForAnUnreadGate(t *testing.T) {
	ps, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	byProvider, status := gateEntries(context.Background(), Config{
		Gate:       unreadGate{},
		GateRoutes: []GateRoute{{Name: "default", Targets: []string{"first", "second"}}},
	}, ps)
	if status != "" || len(byProvider) == 0 {
		t.Fatalf("no entries (%q)", status)
	}
	for provider, entries := range byProvider {
		for _, e := range entries {
			if e.Admitted || e.Command != "" {
				t.Errorf("%s %s: admitted %v, command %q; want refused with no run to make", provider, e.Prompt, e.Admitted, e.Command)
			}
		}
	}
}
