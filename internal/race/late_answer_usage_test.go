package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// lateCost is the metrics, with each attempt's end announced.
type lateCost struct {
	*metrics.Metrics
	finished chan string
}

func (o *lateCost) AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage) {
	o.Metrics.AttemptFinished(provider, role, state, kind, latency, usage)
	o.finished <- state
}

// A stalled attempt's valid answer that comes after the attempt was resolved
// `failed` (its lease expired, and an operator or reconciliation resolved
// it) was billed: its usage is stored on the attempt, which had none, and
// router_cost_usd_total counts the same cost. When the resolution had given
// the attempt usage of its own, that stays, and the answer's is not counted
// in the metrics either: they count what the attempt's cost_usd holds (the
// resolution's figure is an operator's, never counted by the race).
// Found by review (rcost).
func TestLateAnswerOnResolvedFailedAttemptCostsAsStored(t *testing.T) {
	for _, c := range []struct {
		name     string
		resolved any     // the resolution's usage
		prompt   int     // the attempt's prompt tokens after the answer
		counted  float64 // router_cost_usd_total
	}{
		{"resolved without usage", nil, 300, (300*10 + 20*100) / 1e6},
		{"resolved with usage", map[string]any{"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7}, 7, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			sent := make(chan struct{})
			var once sync.Once
			obs := &lateCost{Metrics: metrics.New(metrics.Options{NoProcessCollectors: true}), finished: make(chan string, 8)}
			b := racetest.New(t, racetest.Options{Route: race.Route{KeepLosers: true}, Observer: obs, Providers: []racetest.Provider{
				{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
					Respond: func(int, *providers.Request) providers.Step {
						once.Do(func() { close(sent) })
						<-release
						return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 300, CompletionTokens: 20, TotalTokens: 320}}
					}},
			}})
			ctx := context.Background()
			job := b.SubmitUnplanned(t)
			<-sent
			if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Store.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "test", Usage: c.resolved}); err != nil {
				t.Fatal(err)
			}
			close(release)
			<-obs.finished // the answer was offered and its attempt's end counted
			b.Stop()       // the job's run has ended, its cost counted
			p := racetest.AttemptOn(b.Job(t, job.ID), "primary")
			if p == nil || p.State != store.AttemptFailed {
				t.Fatalf("attempt %+v, want the primary failed (the resolution kept)", p)
			}
			var u providers.Usage
			_ = json.Unmarshal(p.Usage, &u)
			if u.PromptTokens != c.prompt || p.CostUSD == nil {
				t.Fatalf("attempt usage %s, cost %s: want %d prompt tokens and a cost", p.Usage, fmtCost(p.CostUSD), c.prompt)
			}
			if got := testutil.ToFloat64(obs.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, c.counted) {
				t.Fatalf("router_cost_usd_total of the attempt = %v, want %v (its cost_usd %v)", got, c.counted, *p.CostUSD)
			}
		})
	}
}
