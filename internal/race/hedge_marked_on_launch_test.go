package race_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// holdThirdsAdmission admits every target; its admission of "third" (the
// second hedge's target) first lets the silent primary answer and then waits
// for the fallback's attempt (the first hedge) to end, passing on the outcome
// its breaker was told (told), and refuses: the second hedge never starts.
type holdThirdsAdmission struct {
	once          sync.Once
	answer        chan struct{} // closed as third is asked: the primary answers
	fallbackEnded chan race.Outcome
	told          chan race.Outcome
}

func (a *holdThirdsAdmission) Admit(p string) (func(race.Outcome), bool, string) {
	switch p {
	case "fallback":
		return func(o race.Outcome) { a.fallbackEnded <- o }, true, ""
	case "third":
		a.once.Do(func() {
			close(a.answer)
			a.told <- <-a.fallbackEnded
		})
		return nil, false, "circuit breaker half-open: its one probe is taken"
	}
	return func(race.Outcome) {}, true, ""
}

// hedgeDue used to mark the silent attempt hedged before it started the
// hedge (o.start), and unmark it when the start failed. A win that came in
// between cut the silent attempt as a hedged loser although no hedge was
// started for it: kept running to its loss bar, then counted as a failure
// against its breaker (silentPastHedge) and recorded as one. Here the first
// hedge (fallback) is silent when its own hedge comes due; while that second
// hedge's target is asked for admission, the primary wins and the fallback is
// cut. No hedge of the fallback was ever started: its cut is an ordinary
// loser's, ignored by its breaker.
func TestSilentAttemptIsHedgedOnlyOnceItsHedgeIsLaunched(t *testing.T) {
	adm := &holdThirdsAdmission{answer: make(chan struct{}), fallbackEnded: make(chan race.Outcome, 1), told: make(chan race.Outcome, 1)}
	b := setupWith(t, race.Route{HedgeAfter: 20 * time.Millisecond, MaxInflight: 3, Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-adm.answer // silent until the fallback's hedge is being started
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "third", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[0].Provider != "primary" || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("set-up: job %s (%s), attempts %+v: want the primary to win beside the fallback's hedge", j.State, derefString(j.Error), j.Attempts)
	}
	if o := <-adm.told; o != race.OutcomeIgnore { // the fallback's attempt has ended
		t.Fatalf("the fallback's breaker was told %v: want OutcomeIgnore (%v), no hedge of it having started", o, race.OutcomeIgnore)
	}
	j = b.Job(t, j.ID) // recorded before its breaker was told
	if e := string(j.Attempts[1].Error); strings.Contains(e, "counts it as a failure") {
		t.Fatalf("the fallback's attempt was recorded as a silent hedged loser: %s", e)
	}
}
