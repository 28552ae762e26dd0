package metrics_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// router_jobs_settled_total{state="cancelled"} is documented, but nothing
// counted it: a run's own settlement never ends a job cancelled, and the run
// that ends after a caller's cancellation finds the job ended. The
// cancellation counts it, once. Found by review.
func TestCancelledJobIsCountedOnce(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	called := make(chan struct{})
	b := racetest.New(t, racetest.Options{Observer: m, Providers: []racetest.Provider{
		{Name: "p", Respond: racetest.Hang, OnCall: func(int, *providers.Request) { close(called) }},
	}})
	j := b.Submit(t)
	<-called
	ctx := context.Background()
	if err := b.Store.CancelJob(ctx, j.Owner, j.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Store.CancelJob(ctx, j.Owner, j.ID); err != nil { // again: already cancelled
		t.Fatal(err)
	}
	if got := b.WaitSettled(t, j.ID); got.State != store.JobCancelled {
		t.Fatalf("precondition: job %s, want cancelled", got.State)
	}
	b.Stop() // the run has ended, and with it any count of its own
	var total float64
	for _, s := range metrics.JobSettledStates {
		total += counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": s})
	}
	if c := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "cancelled"}); c != 1 || total != 1 {
		t.Errorf(`router_jobs_settled_total{state="cancelled"} = %v (all states: %v) after one job was cancelled twice, want 1 (and 1 in all)`, c, total)
	}
}
