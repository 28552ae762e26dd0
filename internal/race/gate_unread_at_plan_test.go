package race_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// unreadAtPlanGate refuses the fallback at its first ask only, as the
// conformance gate does when it cannot read its results (race.GateUnread:
// conformance_runs locked for a moment, a slow database; the gate keeps that
// refusal for at most 1 s), and admits it at every later ask: the fallback
// has a fresh pass.
type unreadAtPlanGate struct{ asked atomic.Int32 }

func (g *unreadAtPlanGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "fallback" && g.asked.Add(1) == 1 {
		return false, race.GateUnread + " for triage@3 (read conformance standing of fallback on triage@3: timeout: context deadline exceeded)"
	}
	return true, ""
}

// docs/conformance.md: a refusal because the gate could not read its results
// "clears by itself"; a target refused later in the race is asked again when a
// failover or hedge reaches it, and a target refused only by its breaker at
// the plan stays a candidate (asked again later). A target the gate refused
// at the plan only because its results could not be read is dropped from the
// job's candidates for the job's whole life: when the primary then fails, the
// job fails without ever asking the gate again about a fallback that has a
// fresh pass, and its next_step tells the caller to retry.
func TestGateUnreadAtPlanDoesNotDropTheFallbackForTheWholeJob(t *testing.T) {
	gate := &unreadAtPlanGate{}
	b := racetest.New(t, racetest.Options{Gate: gate, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		var tried []string
		for _, a := range j.Attempts {
			tried = append(tried, a.Provider)
		}
		t.Fatalf("job %s after attempts on [%s] (gate asked %d times about the fallback); want it to fail over to the fallback, "+
			"which the gate admits at every ask after the plan's unread one.\nerror: %s\nrouting: %s",
			j.State, strings.Join(tried, ", "), gate.asked.Load(), derefString(j.Error), j.Routing)
	}
}
