package breaker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// endsOf closes ended when provider's attempt has ended (the Observer hears
// it after the attempt's end is stored and its breaker told).
type endsOf struct {
	provider string
	once     sync.Once
	ended    chan struct{}
}

func (o *endsOf) AttemptStarted(string, string) {}
func (o *endsOf) AttemptFinished(provider, _, _ string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	if provider == o.provider {
		o.once.Do(func() { close(o.ended) })
	}
}
func (o *endsOf) RaceLost(string)     {}
func (o *endsOf) HedgeStarted(string) {}
func (o *endsOf) JobSettled(string)   {}

// docs/operations.md, GET /v1/providers: stats' "success rate uses the
// breaker's rule (won, lost and caller errors are successes; provider
// failures, invalid output and unknown outcomes are failures …)", and
// "Latency percentiles are of attempts that returned an answer (won, lost,
// invalid)". A loser kept running after the win (keep_losers) whose own
// first-byte timeout then fires — no response byte at all — is stored `lost`
// (its job succeeded), and its breaker counts the timeout as its target's
// failure (TestKeptLoserCountedAsStored). /v1/providers reads the stored
// state only: the timeout counts as a success, and its time to the timeout
// as an answer's latency. A target that never answers, on a route that keeps
// its losers, shows 100% success and its timeout as its p50 while its
// breaker opens on those very attempts.
func TestProviderStatsCountKeptLoserTimeoutAsBreakerDoes(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	release := make(chan struct{})
	obs := &endsOf{provider: "primary", ended: make(chan struct{})}
	b := setupRace(t, race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true}, set, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-release // silent until after the hedge has won, then its first-byte timeout
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("set-up: job %s", j.State)
	}
	close(release)
	<-obs.ended
	b.Stop()
	j := b.Job(t, job.ID)
	var a *store.Attempt
	for i := range j.Attempts {
		if j.Attempts[i].Provider == "primary" {
			a = &j.Attempts[i]
		}
	}
	if a == nil || a.State != store.AttemptLost {
		t.Fatalf("set-up: primary attempt %+v, want stored lost", a)
	}
	var failures uint32
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" {
			failures = s.Counts.TotalFailures
		}
	}
	if failures != 1 {
		t.Fatalf("set-up: primary's breaker counted %d failures, want 1 (its timeout)", failures)
	}
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := stats["primary"]
	rate := "null"
	if p.SuccessRate != nil {
		rate = fmt.Sprint(*p.SuccessRate)
	}
	if p.Failed != 1 || p.Succeeded != 0 {
		t.Errorf("primary: /v1/providers stats say succeeded=%d failed=%d success_rate=%s for an attempt its breaker counted as a failure "+
			"(stored %s, error %s); want succeeded=0 failed=1, as the breaker counts it", p.Succeeded, p.Failed, rate, a.State, a.Error)
	}
	if p.P50MS != nil {
		t.Errorf("primary: /v1/providers p50_ms=%v from an attempt that returned no answer (its first-byte timeout); want null", *p.P50MS)
	}
}

// metricsEnds is the router's metrics as the race's Observer, closing ended
// when provider's attempt has ended.
type metricsEnds struct {
	*metrics.Metrics
	provider string
	once     sync.Once
	ended    chan struct{}
}

func (o *metricsEnds) AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage) {
	o.Metrics.AttemptFinished(provider, role, state, kind, latency, usage)
	if provider == o.provider {
		o.once.Do(func() { close(o.ended) })
	}
}

// docs/operations.md: router_attempt_duration_seconds — "The provider's
// answer latency is outcome=~"won|lost|invalid", the attempts /v1/providers'
// percentiles read; the Grafana dashboard's latency panel filters so". The
// same kept loser, which never answered (its first-byte timeout), is
// observed there under outcome="lost": its timeout shows as an answer's
// latency.
func TestKeptLoserTimeoutIsNoAnswerLatency(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	release := make(chan struct{})
	obs := &metricsEnds{Metrics: metrics.New(metrics.Options{NoProcessCollectors: true}), provider: "primary", ended: make(chan struct{})}
	b := setupRace(t, race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true}, set, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("set-up: job %s", j.State)
	}
	close(release)
	<-obs.ended
	b.Stop()
	fams, err := obs.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "router_attempt_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == "primary" && labels["outcome"] == "lost" && m.GetHistogram().GetSampleCount() > 0 {
				t.Errorf("router_attempt_duration_seconds{provider=\"primary\",outcome=\"lost\"} observed %d sample(s) (sum %.3fs) of a kept loser that never answered (its first-byte timeout): want no answer latency for it",
					m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum())
			}
		}
	}
}
