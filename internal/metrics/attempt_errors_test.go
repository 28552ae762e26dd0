package metrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
)

// router_attempt_errors_total counts attempts that ended with a provider
// error. An attempt the router stopped itself — a hedge loser cancelled when
// another won, an attempt of a cancelled job, one abandoned or never sent —
// is no provider error: every won hedge used to count a kind="cancelled"
// error against its healthy primary. Found by review.
func TestAttemptErrorsCountOnlyProviderErrors(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	m.AttemptFinished("p", "primary", "cancelled", providers.KindCancelled, time.Second, providers.Usage{})
	m.AttemptFinished("p", "hedge", "cancelled", providers.KindTimeout, time.Second, providers.Usage{})
	m.AttemptFinished("p", "primary", "abandoned", providers.KindTimeout, time.Second, providers.Usage{})
	m.AttemptFinished("p", "primary", "unsent", "", 0, providers.Usage{})
	m.AttemptFinished("p", "primary", "failed", providers.KindCancelled, time.Second, providers.Usage{})
	m.AttemptFinished("p", "primary", "failed", race.KindShutdown, time.Second, providers.Usage{})
	m.AttemptFinished("p", "primary", "unknown", race.KindShutdown, time.Second, providers.Usage{})
	if n, err := testutil.GatherAndCount(m.Registry(), "router_attempt_errors_total"); err != nil || n != 0 {
		t.Fatalf("attempts the router stopped made %d router_attempt_errors_total series (err %v), want none", n, err)
	}
	m.AttemptFinished("p", "primary", "failed", providers.KindUnavailable, time.Second, providers.Usage{})
	m.AttemptFinished("p", "primary", "unknown", providers.KindTimeout, time.Second, providers.Usage{})
	for kind, want := range map[providers.Kind]float64{providers.KindUnavailable: 1, providers.KindTimeout: 1} {
		if got := counterValue(t, m, "router_attempt_errors_total", map[string]string{"provider": "p", "kind": string(kind)}); got != want {
			t.Errorf("router_attempt_errors_total{kind=%q} = %v, want %v", kind, got, want)
		}
	}
}

// finishedSignal is the metrics observer that also says when an attempt on
// one provider has been counted, so the test reads the counters after it.
type finishedSignal struct {
	*metrics.Metrics
	provider string
	done     chan struct{}
}

func (f *finishedSignal) AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage) {
	f.Metrics.AttemptFinished(provider, role, state, kind, latency, usage)
	if provider == f.provider {
		close(f.done)
	}
}

// A hedge that wins cancels the slow primary: the primary is counted in
// router_attempts_total as cancelled, and in no error series.
func TestHedgeLoserIsNotAProviderError(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &finishedSignal{Metrics: m, provider: "primary", done: make(chan struct{})}
	rb := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 100 * time.Millisecond}, Observer: obs, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: time.Minute, Output: racetest.ValidTriage}
		}},
		{Name: "fallback", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: racetest.ValidTriage} }},
	}})
	j := rb.WaitSettled(t, rb.Submit(t).ID)
	if j.State != "succeeded" {
		t.Fatalf("job %s, want succeeded by the hedge", j.State)
	}
	<-obs.done // the cancelled primary's end has been counted
	if got := counterValue(t, m, "router_attempts_total", map[string]string{"provider": "primary", "outcome": "cancelled"}); got != 1 {
		t.Errorf("router_attempts_total{provider=primary,outcome=cancelled} = %v, want 1", got)
	}
	if n, _ := testutil.GatherAndCount(m.Registry(), "router_attempt_errors_total"); n > 0 {
		t.Fatalf("router_attempt_errors_total has %d series after a clean hedge win (no provider failed)", n)
	}
}

// counterValue is the value of the counter series name whose labels include
// labels (0: no such series).
func counterValue(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			return s.GetCounter().GetValue()
		}
	}
	return 0
}
