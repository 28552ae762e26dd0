package metrics_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A valid answer that comes after its job was left pending with the attempt
// in flight is recorded lost (race event "discarded"), though nothing won the
// job: no race was lost, and the race goes on on the next provider. It used
// to be counted in router_races_lost_total. router_attempts_total counts it
// as stored: lost. Found by review.
func TestAnswerToIncompleteJobIsNotALostRace(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &finishedSignal{Metrics: m, provider: "primary", done: make(chan struct{})}
	called := make(chan struct{})
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{Observer: obs, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release
			return providers.Step{Output: racetest.ValidTriage}
		}},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	job := rb.Submit(t)
	<-called
	ctx := context.Background()
	// The job is left pending with its attempt in flight: the answer's
	// compare-and-swap fails, and nothing has completed the job.
	if _, err := rb.DB.Pool.Exec(ctx, `UPDATE jobs SET state = 'pending', version = version + 1 WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-obs.done // the primary's end has been counted
	var state, kind string
	if err := rb.DB.Pool.QueryRow(ctx, `SELECT a.state, e.kind FROM attempts a JOIN race_events e ON e.attempt_id = a.id
		WHERE a.job_id = $1 AND a.provider = 'primary'`, job.ID).Scan(&state, &kind); err != nil {
		t.Fatal(err)
	}
	if state != store.AttemptLost || kind != "discarded" {
		t.Fatalf("precondition: the primary's attempt %s, race event %s; want recorded lost, its answer discarded", state, kind)
	}
	if n, _ := testutil.GatherAndCount(m.Registry(), "router_races_lost_total"); n > 0 {
		t.Errorf("router_races_lost_total has %d series, though nothing won the job", n)
	}
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"provider": "primary", "outcome": "lost"}); got != 1 {
		t.Errorf(`router_attempts_total{provider="primary",outcome="lost"} = %v, want 1, as the attempt is stored`, got)
	}
	j := rb.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.CompletedBy == nil || *j.CompletedBy == j.Attempts[0].ID {
		t.Fatalf("job %s completed by %v, attempts %+v: want the race gone on and won by the fallback", j.State, j.CompletedBy, j.Attempts)
	}
}
