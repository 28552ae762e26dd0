package race_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// Since a due hedge asks the store while its job is blocked (an attempt
// unknown, a silent sibling in flight), the route's hedge budget is asked
// first: when another job held the budget, the blocked job recorded
// hedge_denied in its routing and counted router_hedges_denied_total — "the
// budget held back a hedge" — though the store would have refused the hedge
// for the unknown attempt. An operator would tune hedge_budget instead of
// resolving the attempt. Found by review.
func TestBlockedJobsHedgeIsNotRecordedAsDenied(t *testing.T) {
	release := make(chan struct{})
	job2Hedged := make(chan struct{})
	job1Hedged := make(chan struct{})
	var o2, o1 sync.Once
	obs := &denials{denied: make(chan string, 1000)}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 300 * time.Millisecond, HedgeBudgetMin: 1, MaxInflight: 2, MaxAttempts: 9},
		Observer: obs,
		Providers: []racetest.Provider{
			{Name: "a", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 { // job 2's primary: unknown once its hedge flies
					<-job2Hedged
					return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
						Message: "no response byte before the first-byte timeout"}}
				}
				<-release
				return providers.Step{Output: validTriage}
			}},
			{Name: "b", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 {
					o2.Do(func() { close(job2Hedged) })
				} else {
					o1.Do(func() { close(job1Hedged) })
				}
				<-release
				return providers.Step{Error: &providers.Error{Kind: providers.KindServerError, Action: providers.ActionFailover, Message: "boom"}}
			}},
			{Name: "c", Respond: racetest.OK(validTriage)},
		}})
	j2 := b.Submit(t)
	acted := make(chan struct{}, 1000)
	restore := race.SetHedgeClockHook(func(id string) {
		if id == j2.ID {
			acted <- struct{}{}
		}
	})
	defer restore()
	<-job2Hedged
	deadline := time.Now().Add(30 * time.Second)
	for { // the primary has ended unknown: job 2 is blocked, its budget slot given back
		if j := b.Job(t, j2.ID); len(j.Attempts) > 0 && j.Attempts[0].State == store.AttemptUnknown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job 2's primary never ended unknown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	j1 := b.Submit(t)
	<-job1Hedged // job 1's hedge holds the budget's one slot
	// Job 2's silent hedge comes due again, with the budget spent, each hedge
	// delay (hedgeAgain): let its hedge clock act three times more.
	for range len(acted) {
		<-acted
	}
	for range 3 {
		<-acted
	}
	close(release)
	j := b.WaitSettled(t, j2.ID)
	b.WaitSettled(t, j1.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("set-up: job 2 %s, attempts %s; want unknown", j.State, attemptsOf(j))
	}
	var routing []race.Decision
	if err := json.Unmarshal(b.Job(t, j2.ID).Routing, &routing); err != nil {
		t.Fatal(err)
	}
	for _, d := range routing {
		if d.Event == "hedge_denied" {
			t.Fatalf("job 2 (attempts %s), blocked by an unknown attempt, recorded %q: %s; router_hedges_denied_total counted %d",
				attemptsOf(j), d.Event, d.Reason, len(obs.denied))
		}
	}
}
