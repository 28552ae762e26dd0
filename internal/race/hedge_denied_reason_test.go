package race_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The `hedge_denied` entry of a job's routing says which call the route's
// hedge budget denied (here a hedge on the fallback) and counts what the
// budget counts: the route's calls in flight beyond one per job, not
// "hedges" (a retry or failover beside a job's other calls takes a slot too).
// The event keeps its name.
func TestHedgeDeniedReasonNamesTheCallAndWhatIsCounted(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	firstHedge := make(chan struct{})
	obs := &denials{denied: make(chan string, 100)}
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, HedgeBudgetMin: 1}, nil, obs,
		provSpec{name: "primary", respond: hang},
		provSpec{name: "fallback", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				once.Do(func() { close(firstHedge) })
				<-release
			}
			return providers.Step{Output: validTriage}
		}},
	)
	j1 := b.submit(t)
	<-firstHedge // job 1's hedge holds the budget's only slot
	j2 := b.submit(t)
	<-obs.denied
	close(release)
	for _, id := range []string{j1.ID, j2.ID} {
		if j := b.waitSettled(t, id); j.State != store.JobSucceeded {
			t.Fatalf("job %s: %s (%v)", id, j.State, derefString(j.Error))
		}
	}
	var routing []race.Decision
	if err := json.Unmarshal(b.job(t, j2.ID).Routing, &routing); err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, d := range routing {
		if d.Event == "hedge_denied" {
			reason = d.Reason
		}
	}
	const want = "a hedge on fallback was denied: the route's hedge budget is spent: 1 call in flight beyond one per job, " +
		"and its hedge_budget allows max(min_concurrent 1, 0% of the route's 2 jobs in flight) = 1"
	if reason != want {
		t.Fatalf("hedge_denied reason %q, want %q (routing %+v)", reason, want, routing)
	}
}
