package race_test

import (
	"context"
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

// refusesAC is a breaker stand-in whose "a" is refused by its state (at the
// plan) and its admission, and whose "c" is allowed by its state but refused
// by its admission (a half-open breaker's probe taken meanwhile); both say
// they admit again in 20 ms.
type refusesAC struct{}

const refusesWhy = "circuit breaker open after 5 consecutive failures; probing again in 20ms"

func (refusesAC) Admit(p string) (func(race.Outcome), bool, string) {
	if p == "a" || p == "c" {
		return nil, false, refusesWhy
	}
	return func(race.Outcome) {}, true, ""
}

func (refusesAC) State(p string) (bool, string) {
	if p == "a" {
		return false, refusesWhy
	}
	return true, ""
}

func (refusesAC) AdmitsIn(string) (time.Duration, bool) { return 20 * time.Millisecond, true }

// staleForA is a conformance gate that refuses "a" once stale is set.
type staleForA struct{ stale atomic.Bool }

const staleAWhy = "last pass is 8d old (conformance.max_age is 7d; run `router conformance run --provider a --prompt triage`)"

func (g *staleForA) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "a" && g.stale.Load() {
		return false, staleAWhy
	}
	return true, ""
}

// A target refused by its breaker at the plan, then by the conformance gate,
// no longer clears by itself: the race does not wait for it (as for any
// target the gate refuses) although another target left is refused only by
// its breaker, and the job fails at once, its error naming both.
func TestDeferredTargetTheGateRefusesIsNotWaitedFor(t *testing.T) {
	gate := &staleForA{}
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 3 * time.Second}, Admission: refusesAC{}, Gate: gate,
		Providers: []racetest.Provider{
			{Name: "a", Respond: racetest.OK(racetest.ValidTriage)},
			{Name: "b", Respond: func(int, *providers.Request) providers.Step {
				gate.stale.Store(true) // a's run ages out while b works
				return providers.Step{Status: 500}
			}},
			{Name: "c", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	why := derefString(j.Error)
	if j.State != store.JobFailed || strings.Contains(why, "deadline") ||
		!strings.Contains(why, "a: skipped: "+staleAWhy) || !strings.Contains(why, "c: skipped: ") {
		t.Fatalf("job %s, error %q: want it failed at once (a gated, c refused by its breaker), not after waiting to its deadline", j.State, why)
	}
}
