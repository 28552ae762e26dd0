package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
)

// router_attempt_duration_seconds is "attempt latency from send to end"
// (its help; docs/operations.md), the figure to compare providers by, as
// /v1/providers' p50/p95/p99 (the attempt's stored latency_ms) do. It was
// measured around the whole attempt goroutine, so it included the router's
// own database work after the answer arrived (the compare-and-swap's
// durable commit): a slow database showed up as slow providers, and the
// metric and /v1/providers disagreed about the same attempt. Found by review.
func TestAttemptDurationIsTheProvidersLatency(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &finishedSignal{Metrics: m, provider: "p", done: make(chan struct{})}
	b := racetest.New(t, racetest.Options{Observer: obs, Providers: []racetest.Provider{
		{Name: "p", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: racetest.ValidTriage} }},
	}})
	// A database slow to commit the win (a loaded primary, a slow WAL
	// flush): 800 ms for the job's row update.
	if _, err := b.DB.Pool.Exec(context.Background(), `
		CREATE FUNCTION slow_win() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(0.8); RETURN NEW; END $$;
		CREATE TRIGGER slow_win BEFORE UPDATE ON jobs FOR EACH ROW
			WHEN (NEW.state = 'succeeded') EXECUTE FUNCTION slow_win();`); err != nil {
		t.Fatal(err)
	}
	j := b.WaitSettled(t, b.Submit(t).ID)
	<-obs.done
	if j.State != "succeeded" || len(j.Attempts) != 1 || j.Attempts[0].LatencyMS == nil {
		t.Fatalf("precondition: job %s with %d attempts", j.State, len(j.Attempts))
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n uint64
	for _, f := range fams {
		if f.GetName() == "router_attempt_duration_seconds" {
			for _, s := range f.GetMetric() {
				sum += s.GetHistogram().GetSampleSum()
				n += s.GetHistogram().GetSampleCount()
			}
		}
	}
	// The same figure: the stored latency_ms is the observed latency
	// truncated to the millisecond (a microsecond's slack for the float).
	stored := time.Duration(*j.Attempts[0].LatencyMS) * time.Millisecond
	got := time.Duration(sum * float64(time.Second))
	if n != 1 || got < stored-time.Microsecond || got >= stored+time.Millisecond+time.Microsecond {
		t.Errorf("router_attempt_duration_seconds observed %v in %d sample(s) for an attempt whose provider answered in %v (its latency_ms, as /v1/providers reports it); want that latency, once",
			got, n, stored)
	}
}

// An attempt never sent (the router was stopping) has no latency: it is
// counted in router_attempts_total, not observed at 0 s in the histogram.
func TestUnsentAttemptHasNoDuration(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	m.AttemptFinished("p", "primary", "unsent", "", 0, providers.Usage{})
	m.AttemptFinished("p", "primary", "abandoned", "", 0, providers.Usage{})
	if n, err := testutil.GatherAndCount(m.Registry(), "router_attempt_duration_seconds"); err != nil || n != 0 {
		t.Fatalf("router_attempt_duration_seconds has %d series (err %v) after attempts never sent or abandoned, want none", n, err)
	}
}
