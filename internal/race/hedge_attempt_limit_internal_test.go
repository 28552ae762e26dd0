package race

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// limitDenials is an Observer that counts the hedge budget's denials.
type limitDenials struct {
	nopObserver
	n int
}

func (d *limitDenials) HedgeDenied(string) { d.n++ }

// A hedge that comes due (the hedge timer, or the hedge budget's wake:
// budgetFreed) while the round's attempts have reached max_attempts asks
// nothing: the store would refuse its attempt (store.ErrAttemptLimit), so
// the route's hedge budget is not asked for a slot, no `hedge_denied` is
// recorded or counted, the race is not stopped (the attempt in flight runs
// on, and may still win), and the timer is not armed again for it. Before,
// hedgeDue took a budget slot (or recorded a denial and asked again every
// hedge delay) for an attempt the store then refused. Found by review.
func TestHedgeDueAtMaxAttemptsAsksNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget Route // the route's hedge budget
	}{
		{"budget spent", Route{HedgeBudgetPercent: 1}}, // max(0, 1% of 1 job) = 0 slots
		{"budget free", Route{}},                       // no budget configured
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			obs := &limitDenials{}
			route := tc.budget
			route.HedgeAfter, route.MaxInflight, route.MaxAttempts = time.Second, 2, 1
			o := &orchestrator{
				r:          &Runner{cfg: Config{Targets: map[string]*Target{"a": {}, "b": {}}, Observer: obs}},
				job:        &store.Job{ID: "job", Route: "r"},
				route:      &route,
				routing:    []byte("[]"), // not recorded yet: a denial would go in memory only (recordDecisions)
				log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
				candidates: []string{"a", "b"},
				used:       map[string]bool{"a": true},
				inflight:   map[string]context.CancelCauseFunc{"x": func(error) {}},
				flights:    map[string]*flight{"x": {target: "a", start: now.Add(-2 * time.Second), due: now.Add(-time.Second)}},
			}
			done := o.r.hedges.jobStarted("r")
			defer done()
			o.attemptsCounted(1) // the job's first attempt, x, spent max_attempts 1
			timer := time.NewTimer(time.Hour)
			timer.Stop()
			defer timer.Stop()

			o.hedgeDue(context.Background(), timer)

			if o.budgetAsks != 0 || len(o.extras) != 0 || o.budgetWaiting {
				t.Errorf("the hedge budget was asked %d time(s) (%d slot(s) held, waiting for a wake: %v) for a hedge max_attempts refuses; want never",
					o.budgetAsks, len(o.extras), o.budgetWaiting)
			}
			if o.hedgeDenied || len(o.decisions) != 0 || obs.n != 0 {
				t.Errorf("routing %+v, router_hedges_denied_total +%d: want no hedge_denied for a hedge max_attempts refuses", o.decisions, obs.n)
			}
			if o.stopped {
				t.Errorf("the race was stopped (%q) at the hedge: want the attempt in flight to run on", o.stopWhy)
			}
			if timer.Stop() {
				t.Error("the hedge timer was armed again: a hedge max_attempts refuses would come due again and again")
			}
		})
	}
}
