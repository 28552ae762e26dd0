package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// SPEC §15: hedges in flight <= max(min_concurrent, percent x jobs in flight);
// docs/race.md: "calls in flight beyond one per job <= max(min_concurrent,
// ...)". With max_inflight 3 and a budget of one, a lone job whose primary
// and first hedge are both silent must not start a second hedge: that is two
// calls beyond one, with a budget of one. (Found in review: the job held a
// single slot whatever the number of extra calls it had in flight.)
func TestHedgeBudgetCountsEachExtraCall(t *testing.T) {
	cCalls := make(chan string, 10)
	obs := &denials{denied: make(chan string, 100)}
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, HedgeBudgetMin: 1, MaxInflight: 3}, nil, obs,
		provSpec{name: "primary", respond: hang},
		provSpec{name: "b", respond: hang},
		provSpec{name: "c", respond: hang, onCall: func(_ int, req *providers.Request) { cCalls <- req.JobID }},
	)
	j := b.submit(t)
	defer func() {
		_ = b.st.CancelJob(context.Background(), "acme", j.ID)
		b.runner.Cancel(j.ID)
	}()
	select {
	case <-cCalls:
		t.Fatalf("hedge budget is 1 extra call, but the job has %d attempts in flight (%s): a second hedge started on the first one's slot",
			inFlight(b.job(t, j.ID)), roles(b.job(t, j.ID)))
	case <-obs.denied:
		// The second hedge was denied: one extra call is the budget.
	}
}
