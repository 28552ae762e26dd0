package race_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A job whose first attempt spent the route's max_attempts (1) stays silent
// past hedge_after, with the route's hedge budget spent (1% of one job: no
// slot). The store would refuse a hedge (store.ErrAttemptLimit), so none is
// asked for: the budget is not asked, no `hedge_denied` is recorded in
// routing nor counted (the observer's HedgeDenied), and the race ends as the
// silent attempt does — won, or failed with the attempt limit's reason.
// Before, the hedge timer asked the budget, recorded and counted its denial,
// and asked again every hedge delay, for a hedge that could never start.
// Found by review.
//
// The hedge clock's hook (SetHedgeClockHook) says when it has acted for the
// job — the timer left unarmed at the limit, or a due hedge acted on — before
// the silent attempt is let answer: what it did then is what is checked.
func TestHedgeAtMaxAttemptsAsksNoBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer providers.Step
		state  string
	}{
		{"answered", providers.Step{Output: validTriage}, store.JobSucceeded},
		{"failed", providers.Step{Status: 500}, store.JobFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			obs := &denials{denied: make(chan string, 100)}
			b := setupObserved(t, race.Route{MaxInflight: 2, MaxAttempts: 1, HedgeAfter: time.Millisecond, HedgeBudgetPercent: 1}, nil, obs,
				provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
					<-release
					return tc.answer
				}},
				provSpec{name: "fallback", respond: ok(validTriage)},
			)
			acted := make(chan string, 1000)
			restore := race.SetHedgeClockHook(func(jobID string) {
				select {
				case acted <- jobID:
				default: // the test has seen its job's already
				}
			})
			defer restore()
			defer func() {
				select {
				case <-release:
				default:
					close(release) // a failed check: let the run end
				}
			}()

			j := b.submit(t)
			for id := ""; id != j.ID; {
				select {
				case id = <-acted:
				case <-time.After(time.Minute): // a hang guard, not a timing check
					t.Fatal("the hedge clock never acted for the job")
				}
			}
			if n := len(obs.denied); n != 0 {
				t.Fatalf("the hedge clock asked the route's hedge budget for a hedge max_attempts refuses: %d denial(s) counted; want none", n)
			}
			close(release)

			got := b.waitSettled(t, j.ID)
			if got.State != tc.state || len(got.Attempts) != 1 || attemptBy(got, "primary") == nil {
				t.Fatalf("job %s, attempts %s: want %s, by the primary's attempt alone", got.State, attemptsOf(got), tc.state)
			}
			if n := b.prov["fallback"].Calls(); n != 0 {
				t.Fatalf("the fallback was called %d time(s) with max_attempts spent", n)
			}
			if tc.state == store.JobFailed {
				if limit := store.AttemptLimitError(1, 1).Error(); !strings.Contains(deref(got.Error), limit) {
					t.Fatalf("job error %q, want the attempt limit's reason %q", deref(got.Error), limit)
				}
			}
			var routing []race.Decision
			if err := json.Unmarshal(got.Routing, &routing); err != nil {
				t.Fatal(err)
			}
			for _, d := range routing {
				if d.Event == "hedge_denied" {
					t.Fatalf("routing records a hedge denied with max_attempts spent: %+v", d)
				}
			}
			if n := len(obs.denied); n != 0 {
				t.Fatalf("router_hedges_denied_total counted %d denial(s) with max_attempts spent; want none", n)
			}
		})
	}
}
