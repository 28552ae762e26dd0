package metrics_test

import (
	"testing"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
)

// A job the runner takes up again — adopted by recovery, resumed after a
// resolution, retried by its owner — and fails at once because no target of
// its route can take it (here: every context window is now too small, as
// after a deploy that changed the route's targets) ends failed in this
// process's run, and router_jobs_settled_total counts it: runJob settles it
// itself (prepare found no candidate), and did so without the Observer, so
// an operator alerting on rate(router_jobs_settled_total{state="failed"})
// saw nothing while every resumed job failed. (The leader's failStranded,
// for jobs no replica can run, is internal/race's
// TestStrandedJobFailedByTheLeaderIsCounted.) Found by review.
func TestJobFailedBeforeAnyAttemptIsCounted(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := racetest.New(t, racetest.Options{Observer: m, Providers: []racetest.Provider{
		{Name: "p", ContextWindow: 5, Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: racetest.ValidTriage} }},
	}})
	j := b.WaitSettled(t, b.SubmitUnplanned(t).ID)
	if j.State != "failed" || len(j.Attempts) != 0 {
		t.Fatalf("precondition: job %s with %d attempts, want failed before any attempt", j.State, len(j.Attempts))
	}
	b.Stop() // the run has ended: whatever it reports has been reported
	if got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "failed"}); got != 1 {
		t.Errorf("router_jobs_settled_total{state=\"failed\"} = %v after this process's run failed the job (%s), want 1", got, *j.Error)
	}
}
