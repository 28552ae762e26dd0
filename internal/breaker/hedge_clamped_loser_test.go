package breaker_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A late failover is hedged sooner than hedge_after: the delay is at most
// three quarters of what is left of the job's deadline. Its attempt, cut as a
// loser when the hedge won, was counted as its target's failure for not
// answering within that shortened window — although an attempt the deadline
// itself cuts that early is excused (excusedByDeadline). Only a loser silent
// for its target's own hedge delay counts. Found by review.
//
// a fails after 4 s; b, the failover, starts with 8 s of the job's 12 s left,
// so it is hedged 6 s later (not after hedge_after, 9 s); c, the hedge, wins
// at once and b is cut after 6 s of silence. Whatever the machine's speed, b
// was never silent for 9 s before the job ended (the deadline is 12 s): its
// breaker must not count it. (c has 2 s to win before the deadline, and b 3 s
// of silence more before it would reach hedge_after.)
func TestLateFailoverHedgedEarlyIsNotASilentLoser(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"b": {ConsecutiveFailures: 5, OpenFor: time.Minute}}, breaker.Options{})
	defer set.Close()
	adm := &watchedAdmission{Set: set, provider: "b", released: make(chan race.Outcome, 16)}
	route := race.Route{HedgeAfter: 9 * time.Second, Deadline: 12 * time.Second, HedgeBudgetMin: 3, HedgeBudgetPercent: 10}
	b := setupRace(t, route, adm, nil,
		provSpec{name: "a", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 500, Latency: 4 * time.Second}
		}},
		provSpec{name: "b", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "c", respond: ok(validTriage)})
	id := b.submit(t).ID
	b.waitSettled(t, id)
	if o := <-adm.released; o == race.OutcomeFailure {
		t.Fatalf("b, hedged early because the job's deadline was near and cut as a loser, was reported %v to its breaker", o)
	}
	j := b.Job(t, id) // b's attempt is recorded before it is released
	var onB *store.Attempt
	for i := range j.Attempts {
		if j.Attempts[i].Provider == "b" {
			onB = &j.Attempts[i]
		}
	}
	if onB == nil {
		t.Fatalf("job %s made attempts %+v, want one on b", j.State, j.Attempts)
	}
	var e struct {
		Breaker string `json:"breaker"`
	}
	if err := json.Unmarshal(onB.Error, &e); err != nil || e.Breaker == "failure" {
		t.Fatalf("b's attempt (%s) says its breaker counted it: %s", onB.State, onB.Error)
	}
	if j.State != store.JobSucceeded || onB.State != store.AttemptCancelled {
		// Not the scenario (on a machine so slow that the deadline came
		// first): the checks above proved nothing.
		t.Fatalf("job %s, b %s: want the hedge on c to win and b cut as its loser", j.State, onB.State)
	}
}
