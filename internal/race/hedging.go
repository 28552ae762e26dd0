package race

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// ttfbStats keeps each target's recent times to first byte in this process,
// for adaptive hedging. It is a heuristic, not a guarantee: each replica
// learns from its own attempts, and a restarted one starts without history.
type ttfbStats struct {
	mu      sync.Mutex
	targets map[string]*ttfbRing
}

const (
	ttfbWindow  = 200 // samples kept per target
	ttfbMinimum = 10  // samples before the p95 is trusted
)

type ttfbRing struct {
	samples []time.Duration
	next    int
	p95     time.Duration // cached; 0 when stale
}

// add records a successful attempt's time to first byte.
func (s *ttfbStats) add(target string, d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets == nil {
		s.targets = map[string]*ttfbRing{}
	}
	r := s.targets[target]
	if r == nil {
		r = &ttfbRing{}
		s.targets[target] = r
	}
	if len(r.samples) < ttfbWindow {
		r.samples = append(r.samples, d)
	} else {
		r.samples[r.next] = d
		r.next = (r.next + 1) % ttfbWindow
	}
	r.p95 = 0
}

// p95 is the target's recent p95 time to first byte and whether there is
// enough history to trust it.
func (s *ttfbStats) p95(target string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.targets[target]
	if r == nil || len(r.samples) < ttfbMinimum {
		return 0, false
	}
	if r.p95 == 0 {
		sorted := slices.Clone(r.samples)
		slices.Sort(sorted)
		r.p95 = sorted[int(math.Ceil(0.95*float64(len(sorted))))-1]
	}
	return r.p95, true
}

// adaptiveDelay is target's recent p95 time to first byte clamped to the
// route's [HedgeMin, HedgeMax]; HedgeMax without history.
func (r *Runner) adaptiveDelay(target string, route *Route) time.Duration {
	lo, hi := route.HedgeMin, route.HedgeMax
	if lo <= 0 {
		lo = 2 * time.Second
	}
	if hi < lo {
		hi = max(lo, 10*time.Second)
	}
	p95, ok := r.ttfb.p95(target)
	if !ok {
		return hi
	}
	return min(max(p95, lo), hi)
}

// hedgeBudgets bound each route's hedges in flight in this process, in the
// manner of Envoy's retry budget: at most max(MinConcurrent, Percent% of the
// route's jobs in flight). A lone request can always hedge; an outage that
// makes every job hedge cannot double the traffic.
type hedgeBudgets struct {
	mu     sync.Mutex
	routes map[string]*routeLoad
}

type routeLoad struct{ jobs, hedges int }

func (b *hedgeBudgets) load(route string) *routeLoad {
	if b.routes == nil {
		b.routes = map[string]*routeLoad{}
	}
	l := b.routes[route]
	if l == nil {
		l = &routeLoad{}
		b.routes[route] = l
	}
	return l
}

// jobStarted counts a job in flight on route until the returned func is called.
func (b *hedgeBudgets) jobStarted(route string) (done func()) {
	b.mu.Lock()
	b.load(route).jobs++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.load(route).jobs--
		b.mu.Unlock()
	}
}

// acquire takes one hedge of the route's budget; release gives it back. When
// the budget is spent, why says so in words for the job's routing.
func (b *hedgeBudgets) acquire(name string, route *Route) (release func(), ok bool, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.load(name)
	allowed := max(route.HedgeBudgetMin, int(route.HedgeBudgetPercent*float64(l.jobs)/100))
	if route.HedgeBudgetPercent <= 0 && route.HedgeBudgetMin <= 0 {
		allowed = math.MaxInt // no budget configured
	}
	if l.hedges >= allowed {
		return nil, false, fmt.Sprintf("hedge denied by the route's hedge budget: %d hedges in flight, the budget allows max(%d, %g%% of %d jobs in flight) = %d",
			l.hedges, route.HedgeBudgetMin, route.HedgeBudgetPercent, l.jobs, allowed)
	}
	l.hedges++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			l.hedges--
			b.mu.Unlock()
		})
	}, true, ""
}
