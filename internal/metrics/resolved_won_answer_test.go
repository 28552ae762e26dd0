package metrics_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A valid answer that comes after its own attempt was resolved `succeeded`
// (the attempt stalled past its lease, went unknown, and an operator resolved
// it) is discarded: the attempt is stored won, and no other attempt won the
// job, so no race was lost. It used to be counted in router_races_lost_total
// and router_attempts_total{outcome="lost"}; it is counted as stored (won).
// Found by review.
func TestRMETAnswerAfterOwnSucceededResolutionIsNotALostRace(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &finishedSignal{Metrics: m, provider: "primary", done: make(chan struct{})}
	called := make(chan struct{})
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{Route: race.Route{KeepLosers: true}, Observer: obs, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release
			return providers.Step{Output: racetest.ValidTriage}
		}},
	}})
	job := rb.Submit(t)
	<-called
	ctx := context.Background()
	if _, err := rb.DB.Pool.Exec(ctx, `UPDATE attempts SET state = 'unknown' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.Store.ResolveAttempt(ctx, store.Resolution{Owner: job.Owner, JobID: job.ID, Seq: 1, Outcome: "succeeded",
		Result: json.RawMessage(racetest.ValidTriage), Note: "test"}); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-obs.done
	j := rb.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("precondition: job %s, attempt %s", j.State, j.Attempts[0].State)
	}
	if n, _ := testutil.GatherAndCount(m.Registry(), "router_races_lost_total"); n > 0 {
		t.Errorf("router_races_lost_total has %d series, though no other attempt won (the attempt itself is stored won)", n)
	}
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"outcome": "lost"}); got != 0 {
		t.Errorf(`router_attempts_total{outcome="lost"} = %v for an attempt stored %q, want 0`, got, j.Attempts[0].State)
	}
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"provider": "primary", "outcome": "won"}); got != 1 {
		t.Errorf(`router_attempts_total{provider="primary",outcome="won"} = %v, want 1, as the attempt is stored`, got)
	}
}
