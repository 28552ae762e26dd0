package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The hedge budget (SPEC §15: hedges in flight <= max(min_concurrent,
// percent x jobs in flight), "keeps an outage from doubling traffic") allows
// one extra call here. Every job's primary is silent; the hedge target fails
// at once (HTTP 500) and the race moves on to a third target, which is silent
// too. Job 1 thus holds two calls in flight: its silent primary and the
// hedge's failover on "c", which keeps the hedge's budget. Job 2's hedge is
// denied while job 1's extra call is in flight. (Found in review: the budget
// went back when the hedge's attempt failed, job 2 was granted its hedge, and
// with every job doing so the outage doubled the traffic.)
func TestHedgeBudgetCountsTheHedgesFailover(t *testing.T) {
	cCalls := make(chan string, 10)
	obs := &denials{denied: make(chan string, 100)}
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, HedgeBudgetMin: 1}, nil, obs,
		provSpec{name: "primary", respond: hang},
		provSpec{name: "b", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		provSpec{name: "c", respond: hang, onCall: func(_ int, req *providers.Request) { cCalls <- req.JobID }},
	)
	j1 := b.submit(t)
	<-cCalls // job 1: primary silent, hedge on b failed, c in flight beside the primary
	j2 := b.submit(t)
	defer func() {
		for _, id := range []string{j1.ID, j2.ID} {
			_ = b.st.CancelJob(context.Background(), "acme", id)
			b.runner.Cancel(id)
		}
	}()
	select {
	case id := <-cCalls:
		t.Fatalf("hedge budget is 1 extra call, but job 1 has %d attempts in flight (%s) and job 2 got %d too (%s): "+
			"the hedge's failover is not counted against the budget",
			inFlight(b.job(t, j1.ID)), roles(b.job(t, j1.ID)), inFlight(b.job(t, id)), roles(b.job(t, id)))
	case <-obs.denied:
		// The budget held job 2's hedge back while job 1's extra call flies.
	}
}

// inFlight is how many of a job's attempts are starting or running.
func inFlight(j *store.Job) int {
	n := 0
	for _, a := range j.Attempts {
		if a.State == store.AttemptRunning || a.State == store.AttemptStarting {
			n++
		}
	}
	return n
}
