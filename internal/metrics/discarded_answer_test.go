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

// A valid answer that comes after its job was cancelled (an adapter that does
// not heed its context) is recorded cancelled, with a race event "discarded":
// nothing won the job, so no race was lost. It used to be counted in
// router_races_lost_total and router_attempts_total{outcome="lost"}. Found by
// review.
func TestAnswerAfterCancellationIsNotALostRace(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &finishedSignal{Metrics: m, provider: "primary", done: make(chan struct{})}
	called := make(chan struct{})
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{Observer: obs, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release // deaf: answers whatever its context says
			return providers.Step{Output: racetest.ValidTriage}
		}},
	}})
	job := rb.Submit(t)
	<-called
	if err := rb.Store.CancelJob(context.Background(), "acme", job.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-obs.done // the attempt's end has been counted
	if n, _ := testutil.GatherAndCount(m.Registry(), "router_races_lost_total"); n > 0 {
		t.Errorf("router_races_lost_total has %d series after an answer to a cancelled job (nothing won)", n)
	}
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"outcome": "lost"}); got != 0 {
		t.Errorf("router_attempts_total{outcome=lost} = %v, want 0", got)
	}
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"provider": "primary", "outcome": "cancelled"}); got != 1 {
		t.Errorf("router_attempts_total{provider=primary,outcome=cancelled} = %v, want 1, as the attempt is recorded", got)
	}
	j := rb.WaitSettled(t, job.ID)
	if j.State != store.JobCancelled || j.Attempts[0].State != store.AttemptCancelled ||
		len(j.RaceEvents) != 1 || j.RaceEvents[0].Kind != "discarded" {
		t.Fatalf("job %s, attempt %s, race events %+v; want both cancelled and the answer discarded", j.State, j.Attempts[0].State, j.RaceEvents)
	}
}
