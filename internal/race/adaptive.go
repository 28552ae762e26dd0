package race

import (
	"context"
	"sync"
	"time"
)

// latencyCache keeps each provider's recent p95 for a few seconds, so adaptive
// hedging costs one query per provider per refresh, not one per job. It is a
// performance cache only: no guarantee depends on it.
type latencyCache struct {
	mu      sync.Mutex
	entries map[string]latencyEntry
}

type latencyEntry struct {
	p95     time.Duration
	samples int
	at      time.Time
}

const (
	latencyRefresh = 5 * time.Second
	latencyWindow  = 200 // attempts
	latencyMinimum = 20  // samples before the p95 is trusted
)

// adaptiveDelay is the primary's recent p95 latency clamped to the route's
// bounds; with too few samples it is the upper bound.
func (r *Runner) adaptiveDelay(ctx context.Context, provider string, route *Route) time.Duration {
	lo, hi := route.HedgeMin, route.HedgeMax
	if lo <= 0 {
		lo = 100 * time.Millisecond
	}
	if hi < lo {
		hi = max(lo, 10*time.Second)
	}
	r.p95.mu.Lock()
	if r.p95.entries == nil {
		r.p95.entries = map[string]latencyEntry{}
	}
	e, ok := r.p95.entries[provider]
	r.p95.mu.Unlock()
	if !ok || time.Since(e.at) > latencyRefresh {
		p95, n, err := r.cfg.Store.RecentLatencyP95(ctx, provider, latencyWindow)
		if err == nil {
			e = latencyEntry{p95: p95, samples: n, at: time.Now()}
			r.p95.mu.Lock()
			r.p95.entries[provider] = e
			r.p95.mu.Unlock()
		}
	}
	if e.samples < latencyMinimum {
		return hi
	}
	return min(max(e.p95, lo), hi)
}
