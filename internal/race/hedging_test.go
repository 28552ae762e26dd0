package race_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// denials is an Observer that signals each hedge the budget denied.
type denials struct {
	nop
	denied chan string
}

func (d *denials) HedgeDenied(route string) { d.denied <- route }

type nop struct{}

func (nop) AttemptStarted(string, string) {}
func (nop) AttemptFinished(string, string, string, providers.Kind, time.Duration, providers.Usage) {
}
func (nop) RaceLost(string)     {}
func (nop) HedgeStarted(string) {}
func (nop) JobSettled(string)   {}

// The hedge budget lets one hedge fly (min_concurrent 1, 0%); a second job
// whose primary is silent too is denied its hedge, says so in routing, and
// hedges once the first job's hedge has ended.
func TestHedgeBudgetDeniesAndRecordsInRouting(t *testing.T) {
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
	<-firstHedge
	j2 := b.submit(t)
	if route := <-obs.denied; route != "default" {
		t.Fatalf("denied on route %q", route)
	}
	close(release)
	for _, id := range []string{j1.ID, j2.ID} {
		j := b.waitSettled(t, id)
		if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil || attemptBy(j, "fallback").Role != store.RoleHedge {
			t.Fatalf("job %s: %s attempts %+v", id, j.State, j.Attempts)
		}
	}
	var routing []race.Decision
	if err := json.Unmarshal(b.job(t, j2.ID).Routing, &routing); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range routing {
		if d.Event == "hedge_denied" && d.Provider == "fallback" && strings.Contains(d.Reason, "hedge budget") {
			found = true
		}
	}
	if !found {
		t.Fatalf("routing of the denied job does not say the hedge was denied: %+v", routing)
	}
	// The entry says which call the budget denied (a hedge on the fallback)
	// and counts what the budget counts: the route's calls in flight beyond
	// one per job, not "hedges" (a retry or failover beside a job's other
	// calls takes a slot too). The event keeps its name.
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

// An attempt whose provider had begun answering when its timeout passed is a
// known outcome (failed, stream_timeout), not unknown: the job fails over.
func TestTimeoutAfterBytesIsFailedAndFailsOver(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", timeout: 200 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: validTriage, Hang: true, HangAfterBytes: true}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	p := attemptBy(j, "primary")
	if j.State != store.JobSucceeded || p.State != store.AttemptFailed || !strings.Contains(string(p.Error), "stream_timeout") {
		t.Fatalf("job %s primary %s %s", j.State, p.State, p.Error)
	}
}
