// Package metrics holds the router's Prometheus collectors, on a registry of its
// own (nothing is registered globally), and serves them at /metrics. It is the
// race's Observer; the HTTP API calls IdempotentReplay and KeyConflict.
//
// Every series is named router_*; see docs/operations.md for the list.
package metrics

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

var (
	_ race.Observer     = (*Metrics)(nil)
	_ race.CostObserver = (*Metrics)(nil)
)

// BreakerSource gives this process's breaker state per provider
// ("closed", "half-open", "open"); breaker.Set implements it.
type BreakerSource interface {
	BreakerStates() map[string]string
}

// ReplicaSource lists every replica's published breaker states;
// store.Store implements it.
type ReplicaSource interface {
	ListBreakerStates(ctx context.Context, maxAge time.Duration) ([]store.BreakerState, error)
}

// Options tune the collectors. Every field is optional.
type Options struct {
	// Pool: database pool statistics.
	Pool *pgxpool.Pool
	// DB: the database work counters (round trips, statements, transactions,
	// durable commits, batch sizes); see NewDB.
	DB *DB
	// Breakers: this process's breaker states, read at scrape time.
	Breakers BreakerSource
	// Targets and Routes: the configured target ids and the names of the
	// breakers of models sent in a target's place (the provider label of
	// the race's series) and route names, whose race counters are exposed
	// at 0 from start-up (zeroSeries).
	Targets []string
	Routes  []string
	// Replicas and ReplicaMaxAge: every live replica's published breaker states,
	// read from the database at scrape time (router_breaker_replica_state).
	Replicas      ReplicaSource
	ReplicaMaxAge time.Duration
	// LiveJobs: the database's jobs not yet terminal, counted at scrape time
	// (router_jobs_live).
	LiveJobs LiveJobSource
	// LatencyBuckets for attempt latency histograms (seconds); default covers
	// 50ms to 2 minutes.
	LatencyBuckets []float64
	// NoProcessCollectors leaves out the Go runtime and process collectors.
	NoProcessCollectors bool
}

// Metrics is the set of collectors. Its methods are safe for concurrent use and
// never block.
type Metrics struct {
	reg *prometheus.Registry

	jobs          *prometheus.CounterVec
	attemptsStart *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	errors        *prometheus.CounterVec
	racesLost     *prometheus.CounterVec
	hedgesStarted *prometheus.CounterVec
	hedgesWon     *prometheus.CounterVec
	hedgesDenied  *prometheus.CounterVec
	replays       prometheus.Counter
	conflicts     prometheus.Counter
	latency       *prometheus.HistogramVec
	tokens        *prometheus.CounterVec
	transitions   *prometheus.CounterVec
	cost          *prometheus.CounterVec
	http          httpMetrics
}

// JobSettledStates are the values of router_jobs_settled_total's state label,
// each exposed at 0 before its first job.
var JobSettledStates = []string{store.JobSucceeded, store.JobFailed, store.JobUnknown, store.JobCancelled}

// DefaultLatencyBuckets are the attempt latency buckets, in seconds.
var DefaultLatencyBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}

// New makes and registers the collectors.
func New(opt Options) *Metrics {
	if opt.LatencyBuckets == nil {
		opt.LatencyBuckets = DefaultLatencyBuckets
	}
	if opt.ReplicaMaxAge <= 0 {
		opt.ReplicaMaxAge = 15 * time.Second
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_jobs_settled_total",
			Help: "Jobs settled by this process, by final state (succeeded, failed, unknown, cancelled)."}, []string{"state"}),
		attemptsStart: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_attempts_started_total",
			Help: "Attempts sent to a provider, by provider and role (primary, retry, failover, hedge)."}, []string{"provider", "role"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_attempts_total",
			Help: "Attempts ended, by provider, role and outcome (won, lost, failed, invalid, unknown, cancelled, abandoned, unsent: launched while the router was stopping, never sent, handed over)."},
			[]string{"provider", "role", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_attempt_errors_total",
			Help: "Attempts that ended with a provider error, by provider and error kind."}, []string{"provider", "kind"}),
		racesLost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_races_lost_total",
			Help: "Valid results discarded because another attempt had already won, by provider."}, []string{"provider"}),
		hedgesStarted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_hedges_started_total",
			Help: "Hedge attempts started, by provider."}, []string{"provider"}),
		hedgesWon: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_hedges_won_total",
			Help: "Hedge attempts that won their job's race, by provider."}, []string{"provider"}),
		hedgesDenied: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_hedges_denied_total",
			Help: "Job runs in this process denied an extra call in flight by the route's hedge budget (a hedge, or a retry or failover beside the job's other calls), by route: once per run, however often the call is asked for again, as the job's routing records it (\"event\": \"hedge_denied\")."}, []string{"route"}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_idempotent_replays_total",
			Help: "Requests answered with an existing job for the same idempotency key and fingerprint."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_idempotency_key_conflicts_total",
			Help: "Requests rejected (409) because their idempotency key was used with a different request."}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "router_attempt_duration_seconds",
			Help:    "Attempt latency from send to end, by provider and outcome; the provider's answer latency is outcome won, lost or invalid (as /v1/providers' percentiles), the other outcomes end where the attempt was cut (a cancelled hedge loser at about the hedge delay).",
			Buckets: opt.LatencyBuckets}, []string{"provider", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_tokens_total",
			Help: "Tokens reported by providers, by provider and kind (prompt, completion), for every attempt that returned usage (winners and losers)."},
			[]string{"provider", "kind"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_breaker_transitions_total",
			Help: "Circuit breaker state changes in this process, by provider and new state."}, []string{"provider", "to"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_cost_usd_total",
			Help: "USD spent on attempts (usage × the configured price), winners and losers, by owner, provider and model."},
			[]string{"owner", "provider", "model"}),
		http: newHTTPMetrics(),
	}
	m.reg.MustRegister(m.http.collectors()...)
	m.reg.MustRegister(m.jobs, m.attemptsStart, m.attempts, m.errors, m.racesLost, m.hedgesStarted, m.hedgesWon, m.hedgesDenied,
		m.replays, m.conflicts, m.latency, m.tokens, m.transitions, m.cost)
	for _, c := range []prometheus.Counter{m.replays, m.conflicts} {
		c.Add(0)
	}
	// Every documented state at 0 from the start (as webhook outcomes are):
	// a series that appears with its first job has no earlier sample, so
	// rate() and increase() over it miss that job — each process's first
	// unknown job would never fire the alert on it (docs/operations.md).
	for _, state := range JobSettledStates {
		m.jobs.WithLabelValues(state)
	}
	m.zeroSeries(opt.Targets, opt.Routes)
	if opt.Breakers != nil {
		m.reg.MustRegister(&breakerCollector{src: opt.Breakers})
		// The same for each breaker's transitions; the breakers are known
		// now (a BreakerSource lists every configured target's).
		for provider := range opt.Breakers.BreakerStates() {
			for _, to := range breakerStates {
				m.transitions.WithLabelValues(provider, to)
			}
		}
	}
	if opt.Replicas != nil {
		m.reg.MustRegister(&replicaCollector{src: opt.Replicas, maxAge: opt.ReplicaMaxAge})
	}
	if opt.LiveJobs != nil {
		m.reg.MustRegister(&liveJobCollector{src: opt.LiveJobs})
	}
	if opt.Pool != nil {
		m.reg.MustRegister(&poolCollector{pool: opt.Pool})
	}
	if opt.DB != nil {
		m.reg.MustRegister(opt.DB.collectors()...)
	}
	if !opt.NoProcessCollectors {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry is the metrics' own registry (to add collectors, or in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, Timeout: 10 * time.Second})
}

// IdempotentReplay counts a request answered with an existing job.
func (m *Metrics) IdempotentReplay() { m.replays.Inc() }

// KeyConflict counts a request refused because its key was reused with a
// different request.
func (m *Metrics) KeyConflict() { m.conflicts.Inc() }

// BreakerChanged counts a breaker transition (wire it to breaker.Options.OnChange).
func (m *Metrics) BreakerChanged(provider, to string) {
	m.transitions.WithLabelValues(provider, to).Inc()
}

// AttemptStarted implements race.Observer.
func (m *Metrics) AttemptStarted(provider, role string) {
	m.attemptsStart.WithLabelValues(provider, role).Inc()
}

// AttemptFinished implements race.Observer.
func (m *Metrics) AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage) {
	m.attempts.WithLabelValues(provider, role, state).Inc()
	if kind != "" && providerError(state, kind) {
		m.errors.WithLabelValues(provider, string(kind)).Inc()
	}
	// Never sent, or its end not recorded: no latency to tell. Every other
	// outcome is observed, a cancelled or timed-out attempt at the time it
	// was cut; the provider's answer latency is outcome won, lost or
	// invalid, as /v1/providers' percentiles read (the Grafana panel
	// filters so). A lost attempt with an error kind returned no answer: a
	// call that ended unknown (its own timeout) after its job had been won,
	// stored lost. Its time is observed under outcome unknown, the call's
	// end, not as an answer's latency.
	if state != "abandoned" && state != "unsent" {
		outcome := state
		if state == store.AttemptLost && kind != "" {
			outcome = store.AttemptUnknown
		}
		m.latency.WithLabelValues(provider, outcome).Observe(latency.Seconds())
	}
	if usage.PromptTokens > 0 {
		m.tokens.WithLabelValues(provider, "prompt").Add(float64(usage.PromptTokens))
	}
	if usage.CompletionTokens > 0 {
		m.tokens.WithLabelValues(provider, "completion").Add(float64(usage.CompletionTokens))
	}
	if role == store.RoleHedge && state == store.AttemptWon {
		m.hedgesWon.WithLabelValues(provider).Inc()
	}
}

// providerError says whether an attempt that ended with an error of kind, in
// state, ended with a provider error (router_attempt_errors_total). An attempt
// the router itself stopped is not one: a hedge loser cancelled when another
// attempt won, an attempt of a cancelled job, one abandoned to recovery (the
// router stopping, or its end not recorded), one never sent. Those are
// counted by router_attempts_total's outcome, not against the provider.
func providerError(state string, kind providers.Kind) bool {
	switch state {
	case store.AttemptCancelled, "abandoned", "unsent":
		return false
	}
	// An attempt cut because its own router was stopping (race.KindShutdown)
	// says nothing of the provider, as its breaker does not count it.
	return kind != providers.KindCancelled && kind != race.KindShutdown
}

// AttemptCost implements race.CostObserver. The cost follows from the usage a
// provider reported, which nothing checks: a negative one (negative token
// counts) would make the counter panic — in the attempt's goroutine, ending
// the process — and NaN or ±Inf would poison the series for good. Those are
// left out.
func (m *Metrics) AttemptCost(owner, provider, model string, usd float64) {
	if !(usd >= 0) || math.IsInf(usd, 1) {
		return
	}
	m.cost.WithLabelValues(owner, provider, model).Add(usd)
}

// RaceLost implements race.Observer.
func (m *Metrics) RaceLost(provider string) { m.racesLost.WithLabelValues(provider).Inc() }

// HedgeStarted implements race.Observer.
func (m *Metrics) HedgeStarted(provider string) { m.hedgesStarted.WithLabelValues(provider).Inc() }

// HedgeDenied implements race.HedgeDenialObserver.
func (m *Metrics) HedgeDenied(route string) { m.hedgesDenied.WithLabelValues(route).Inc() }

// JobSettled implements race.Observer.
func (m *Metrics) JobSettled(state string) { m.jobs.WithLabelValues(state).Inc() }

var breakerStates = []string{"closed", "half-open", "open"}

// breakerCollector reads this process's breaker states at scrape time.
type breakerCollector struct{ src BreakerSource }

var breakerDesc = prometheus.NewDesc("router_breaker_state",
	"This process's circuit breaker state per provider: 1 for the current state, 0 for the others.",
	[]string{"provider", "state"}, nil)

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for provider, cur := range c.src.BreakerStates() {
		for _, s := range breakerStates {
			v := 0.0
			if s == cur {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, provider, s)
		}
	}
}

// replicaCollector reads every live replica's published breaker states.
type replicaCollector struct {
	src    ReplicaSource
	maxAge time.Duration
}

var (
	replicaDesc = prometheus.NewDesc("router_breaker_replica_state",
		"Circuit breaker state per provider as each live replica published it: 1 for its current state, 0 for the others.",
		[]string{"replica", "provider", "state"}, nil)
	replicaUpDesc = prometheus.NewDesc("router_breaker_replica_scrape_ok",
		"1 when the replicas' breaker states could be read from the database at this scrape.", nil, nil)
)

func (c *replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- replicaDesc
	ch <- replicaUpDesc
}

func (c *replicaCollector) Collect(ch chan<- prometheus.Metric) {
	var rows []store.BreakerState
	if !readAtScrape(ch, replicaUpDesc, func(ctx context.Context) (err error) {
		rows, err = c.src.ListBreakerStates(ctx, c.maxAge)
		return err
	}) {
		return
	}
	for _, r := range rows {
		for _, s := range breakerStates {
			v := 0.0
			if s == r.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(replicaDesc, prometheus.GaugeValue, v, r.Replica, r.Provider, s)
		}
	}
}

// poolCollector exposes pgxpool statistics.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolAcquired  = prometheus.NewDesc("router_db_pool_acquired_connections", "Connections currently checked out of the database pool.", nil, nil)
	poolIdle      = prometheus.NewDesc("router_db_pool_idle_connections", "Idle connections in the database pool.", nil, nil)
	poolTotal     = prometheus.NewDesc("router_db_pool_total_connections", "Open connections in the database pool (acquired, idle and being built).", nil, nil)
	poolMax       = prometheus.NewDesc("router_db_pool_max_connections", "Largest size the database pool may grow to.", nil, nil)
	poolAcquires  = prometheus.NewDesc("router_db_pool_acquires_total", "Successful acquisitions of a pool connection.", nil, nil)
	poolEmpty     = prometheus.NewDesc("router_db_pool_empty_acquires_total", "Acquisitions that had to wait for a connection (the pool was empty).", nil, nil)
	poolCanceled  = prometheus.NewDesc("router_db_pool_canceled_acquires_total", "Acquisitions cancelled by their context while waiting.", nil, nil)
	poolWait      = prometheus.NewDesc("router_db_pool_acquire_wait_seconds_total", "Total time acquisitions spent waiting for a pool connection because none was idle (a connection released or opened).", nil, nil)
	poolNew       = prometheus.NewDesc("router_db_pool_new_connections_total", "Connections opened by the pool.", nil, nil)
	poolDestroyed = prometheus.NewDesc("router_db_pool_destroyed_connections_total", "Connections closed by the pool (idle or max lifetime).", nil, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolAcquires, poolEmpty, poolCanceled, poolWait, poolNew, poolDestroyed} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	k := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	g(poolAcquired, float64(s.AcquiredConns()))
	g(poolIdle, float64(s.IdleConns()))
	g(poolTotal, float64(s.TotalConns()))
	g(poolMax, float64(s.MaxConns()))
	k(poolAcquires, float64(s.AcquireCount()))
	k(poolEmpty, float64(s.EmptyAcquireCount()))
	k(poolCanceled, float64(s.CanceledAcquireCount()))
	k(poolWait, s.EmptyAcquireWaitTime().Seconds()) // the waits of acquisitions that found the pool empty (AcquireDuration is every acquisition's time)
	k(poolNew, float64(s.NewConnsCount()))
	k(poolDestroyed, float64(s.MaxLifetimeDestroyCount()+s.MaxIdleDestroyCount()))
}

// CostCounter is router_cost_usd_total, for tests.
func (m *Metrics) CostCounter() *prometheus.CounterVec { return m.cost }

// readAtScrape runs a database read for a scrape, within 2 s, and reports on
// up (a gauge: 1 when it succeeded, 0 when not) whether its figures follow.
// The read is not counted as database work (Uncounted): a scrape must not
// move the router_db_* counters it reports.
func readAtScrape(ch chan<- prometheus.Metric, up *prometheus.Desc, read func(ctx context.Context) error) bool {
	ctx, cancel := context.WithTimeout(Uncounted(context.Background()), 2*time.Second)
	defer cancel()
	if err := read(ctx); err != nil {
		ch <- prometheus.MustNewConstMetric(up, prometheus.GaugeValue, 0)
		return false
	}
	ch <- prometheus.MustNewConstMetric(up, prometheus.GaugeValue, 1)
	return true
}
