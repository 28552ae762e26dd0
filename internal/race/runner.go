// Package race owns running a job's attempts: choosing the provider, creating
// attempt rows, calling the provider under a lease, judging the output with the
// prompt's contract, and completing the job through the store's compare-and-swap.
//
// It must not hold any guarantee in memory: the blocking rule, the bounds and the
// winner are decided by internal/store in the database. In-process state here is
// only what this process is doing right now (to cancel it).
package race

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// Target is one {provider, model} of the configuration as the runner sees it:
// the provider's adapter plus what routing needs to know. Targets are keyed by
// their id (config.ResolvedTarget.ID), which is what attempts, breakers,
// conformance results and statistics name as their `provider`.
type Target struct {
	Provider      providers.Provider
	Model         string
	ContextWindow int
	// ProviderWindow is the provider's own context_window: the window of a
	// model a request passes through in place of Model (a route's models, a
	// prompt's model) that no target of the provider configures (targetFor),
	// as config gives a route target that sets none. 0: ContextWindow.
	ProviderWindow int
	// ProviderPrice prices such a model: the provider's price when the
	// provider names no model of its own (its price is then every model's,
	// as config prices every target of it); nil otherwise (a provider's price
	// is its own model's).
	ProviderPrice *providers.Price
	Encoding      string        // tokenizer encoding; "" derives it from Model
	Timeout       time.Duration // one attempt; the adapter classifies what a deadline means (SPEC §15)
	// FirstByteTimeout is how long the adapter waits for a response's first
	// byte (0: only Timeout): with Timeout, the latest a hedge on an
	// attempt without a first byte can still start (adaptiveDelay).
	FirstByteTimeout time.Duration
	Stream           bool // use the streaming API when the adapter has one
	MaxRetries       int  // retries on this provider for transient errors, per job
	// DefaultMaxTokens is the max_tokens the adapter sends when a request
	// sets none (an Anthropic provider's max_tokens, default 4096, which the
	// Messages API requires); 0: the adapter sends none. Routing counts it
	// against the context window, as the provider will.
	DefaultMaxTokens int
	// Price, when set, prices the target's usage (attempt cost_usd, SPEC §18).
	Price *providers.Price
}

// Route is the ordered targets of a route and its policy.
type Route struct {
	// Providers are the route's target ids, primary first.
	Providers []string
	// HedgeAfter starts a hedge on the next target when the in-flight attempt
	// has no result after it; 0 disables hedging unless AdaptiveHedge.
	HedgeAfter time.Duration
	// AdaptiveHedge uses the in-flight target's recent p95 time to first byte
	// in this process, clamped to [HedgeMin, HedgeMax] (HedgeMax without
	// history), instead of HedgeAfter.
	AdaptiveHedge      bool
	HedgeMin, HedgeMax time.Duration
	// HedgeBudgetPercent and HedgeBudgetMin bound the route's hedges in flight
	// in this process: at most max(HedgeBudgetMin, HedgeBudgetPercent% of the
	// route's jobs in flight). Both zero: no budget (unlimited); a configured
	// budget of nothing reaches the race as MaxInflight 1 instead
	// (server.BuildRoutes).
	HedgeBudgetPercent float64
	HedgeBudgetMin     int
	MaxInflight        int
	MaxAttempts        int
	Deadline           time.Duration // the whole job; attempts cut by it are unknown
	// FailoverOnContentPolicy fails over on a content-policy rejection instead of
	// reporting it to the caller.
	FailoverOnContentPolicy bool
	// KeepLosers lets in-flight attempts run on after another won, to observe
	// them; their results are recorded as lost. Default: cancel them.
	KeepLosers bool
	// ConformancePrompt names the prompt whose conformance results gate the
	// route's fallbacks for raw chat completions; empty turns the gate off for them.
	ConformancePrompt string
}

// Gate decides whether a provider may take an attempt of a given role now
// (conformance, circuit breakers). model is the model the attempt will ask
// for (spec.modelOn: the job's, else the target's), which results are per.
// A nil Gate allows everything.
type Gate interface {
	AllowModel(ctx context.Context, provider, model string, p *prompt.Prompt, role string) (ok bool, reason string)
}

// Backoff is the retry policy: capped exponential with full jitter, never
// sooner than the provider's Retry-After; a Retry-After longer than
// MaxRetryAfter fails over instead of waiting.
type Backoff struct {
	Base, Cap     time.Duration
	MaxRetryAfter time.Duration
}

// WithDefaults is b with its zero (or negative) fields set to
// execution.retry's defaults: base 200ms, cap 5s, max_retry_after 30s.
func (b Backoff) WithDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 200 * time.Millisecond
	}
	if b.Cap <= 0 {
		b.Cap = 5 * time.Second
	}
	if b.MaxRetryAfter <= 0 {
		b.MaxRetryAfter = 30 * time.Second
	}
	return b
}

// Ceiling is the longest wait before retry n (n counts from 1): Base doubled
// n-1 times, capped at Cap. It stops doubling at the cap, so no n and no
// Base (up to Cap) overflows it to a short or negative wait.
func (b Backoff) Ceiling(n int) time.Duration {
	d := min(b.Base, b.Cap)
	for range n - 1 {
		if d > b.Cap-d { // 2d > Cap, without overflowing
			return b.Cap
		}
		d *= 2
	}
	return d
}

// Config is what the runner needs.
type Config struct {
	Store      *store.Store
	Listener   *store.Listener // optional: cross-replica cancellation
	Prompts    *prompt.Set
	Targets    map[string]*Target
	Routes     map[string]*Route
	LeaseOwner string        // this process's id
	Lease      time.Duration // default 30s
	Backoff    Backoff
	// ReconcileAfter is how long an attempt stays unknown before its provider
	// is asked about it (default 2m): a provider may still be working on a
	// request the router gave up on, and "no record" is only trusted after it.
	ReconcileAfter time.Duration
	// HandoverWait is how long a job this replica cannot run (its route is
	// not configured here, or its prompt version is not the one loaded: a
	// rolling update) is left to a replica that can, counted on the database
	// clock from when it became an orphan, before the recovery leader adopts
	// it to fail it (default 2m or twice Lease; stranded.go).
	HandoverWait time.Duration
	Gate         Gate      // conformance; nil allows every provider
	Admission    Admission // circuit breakers; nil admits every attempt
	Observer     Observer  // metrics; nil observes nothing
	Log          *slog.Logger
	// StopGrace is how long Stop waits, once it has cut the attempts in
	// flight, for the job runs to record what they know and end (default
	// 10s): past it, Stop cancels their database writes and returns,
	// leaving the jobs still running to their leases (stop.go).
	StopGrace time.Duration
}

// Runner runs jobs in the background. Start it, Submit jobs, Stop it.
type Runner struct {
	cfg Config

	base       context.Context
	cancelBase context.CancelCauseFunc
	// hard ends when Stop gives up waiting for the job runs (StopGrace):
	// the writes that record an attempt's or a job's end are cancelled
	// then (detached).
	hard       context.Context
	cancelHard context.CancelFunc
	// gaveUp is closed when a Stop has given up on the job runs, after its
	// last wait (awaitRuns): every other Stop returns with it.
	gaveUp     chan struct{}
	gaveUpOnce sync.Once
	givingUp   atomic.Bool // a Stop has begun giving up (awaitRuns): only one does
	wg         sync.WaitGroup
	ttfb       ttfbStats
	hedges     hedgeBudgets

	// draining: the process is stopping; no new attempt starts but a hedge
	// that ends before the drain does (drain.go).
	draining  atomic.Bool
	drained   chan struct{} // closed by Drain
	drainOnce sync.Once
	drainEnd  atomic.Int64 // when the drain budget runs out (Unix ns); 0: no budget

	mu       sync.Mutex
	stopping bool
	running  map[string]runningJob
	again    map[string]bool // jobs submitted again while running
	// later are the jobs to run again when a circuit breaker may admit
	// them (breakerwait.go), each with its timer.
	later    map[string]*time.Timer
	keeping  bool // the lease keeper runs
	keeperWG sync.WaitGroup
	// nextRenewal is when the lease keeper's next tick comes (this
	// process's clock); wakeKeeper wakes it between ticks for the jobs that
	// cannot wait for it (holdLease).
	nextRenewal time.Time
	wakeKeeper  chan struct{}
	// keeperTicks, set by a test before the keeper starts, replaces the
	// keeper's tick timer: a tick's pass runs for each time sent on it, as if
	// it were then.
	// keeperPassed, set so too, is called after each pass of the keeper.
	// Both are nil outside tests.
	keeperTicks  chan time.Time
	keeperPassed func()
}

// errShutdown is the cause of contexts cancelled because the process stops
// (the drain ran out, or a second signal): each attempt cut by it records at
// once, within a short bound, what is known of it (runAttempt: failed if its
// provider had begun answering, unknown if it had been sent and no byte had
// come, not sent if it had not left); its job is not settled here, and
// another replica's recovery takes it over.
var errShutdown = errors.New("router shutting down")

// errJobCancelled is the cause when the job was cancelled.
var errJobCancelled = errors.New("job cancelled")

// New makes a runner.
func New(cfg Config) *Runner {
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ReconcileAfter == 0 {
		cfg.ReconcileAfter = 2 * time.Minute
	}
	if cfg.HandoverWait <= 0 {
		cfg.HandoverWait = max(2*time.Minute, 2*cfg.Lease) // as config's default
		if cfg.Lease > math.MaxInt64/2 {
			cfg.HandoverWait = math.MaxInt64 // 2×lease overflowed to a negative
		}
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	cfg.Backoff = cfg.Backoff.WithDefaults()
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = defaultStopGrace
	}
	if cfg.Store != nil {
		// A job whose creation's outcome was lost and that the store fails
		// in the background (its caller sent no key), and a job its caller
		// cancels, are settled by no run: counted here, as a run's end is.
		cfg.Store.OnSettledByNoRun(cfg.Observer.JobSettled)
	}
	base, cancel := context.WithCancelCause(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, base: base, cancelBase: cancel, hard: hard, cancelHard: cancelHard, gaveUp: make(chan struct{}),
		running: map[string]runningJob{}, again: map[string]bool{}, later: map[string]*time.Timer{},
		drained: make(chan struct{}), wakeKeeper: make(chan struct{}, 1)}
}

// Submit starts orchestrating job in the background, once per process. It is
// also how a job is resumed (after a resolution or a retry, or by recovery):
// the orchestrator derives everything from the database.
func (r *Runner) Submit(job *store.Job) { r.submit(job.ID, nil, nil, trace.SpanContext{}) }

// SubmitNew starts a job that CreateJob has just created for this process (it
// holds the job's lease from its creation), with the plan it was created from
// (nil when none): the job is neither leased nor read again, and its first
// attempt, created with it, is sent at once. Any other job goes through Submit.
func (r *Runner) SubmitNew(job *store.Job, jp store.JobPlan) {
	r.submitNew(job, jp, trace.SpanContext{})
}

// submitNew is SubmitNew with the span context the job's span is to continue
// (invalid: none).
func (r *Runner) submitNew(job *store.Job, jp store.JobPlan, parent trace.SpanContext) {
	plan, _ := jp.(*Plan)
	fresh := job.HeldBy == r.cfg.LeaseOwner &&
		(job.State == store.JobPending && len(job.Attempts) == 0 ||
			job.State == store.JobRunning && len(job.Attempts) == 1 && plan.First() != nil)
	if fresh {
		r.submit(job.ID, job, plan, parent)
		return
	}
	plan.Discard()
	r.submit(job.ID, nil, nil, parent)
}

// SubmitID is Submit by job id.
func (r *Runner) SubmitID(jobID string) { r.submit(jobID, nil, nil, trace.SpanContext{}) }

// submit runs the job in the background unless it runs here already; parent,
// when valid, is the span context its span continues. accepted is false when
// the runner is stopping and will not run the job (see scan).
func (r *Runner) submit(jobID string, fresh *store.Job, plan *Plan, parent trace.SpanContext) (accepted bool) {
	r.mu.Lock()
	if r.stopping {
		// Not under r.mu: the hand-over writes to the database (up to its
		// exit bounds on a held row), and every other user of r.mu — Runs,
		// other submits, the lease keeper, each job run's end — would wait
		// behind it.
		r.mu.Unlock()
		plan.Discard()
		if fresh != nil {
			// Created here a moment ago, with its first attempt never sent:
			// say so and free the job at once for a live replica, rather than
			// leave the attempt to expire as unknown.
			r.handOver(fresh)
		}
		return false // the job stays pending or running for recovery by a live replica
	}
	defer r.mu.Unlock()
	if _, ok := r.running[jobID]; ok {
		// The job's orchestration is ending here while something asks for it
		// again (a resolution, a retry): run it once more when it has ended.
		r.again[jobID] = true
		plan.Discard()
		return true
	}
	ctx, cancel := context.WithCancelCause(r.base)
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	// A fresh job's leases were set by its claim's statement, which it
	// records (the send fence counts from it too); that statement's answer
	// may have come late. Any other job's lease is set by its run
	// (AcquireJobLease), after this.
	since := time.Now()
	if fresh != nil && !fresh.LeaseSentAt.IsZero() && fresh.LeaseSentAt.Before(since) {
		since = fresh.LeaseSentAt
	}
	r.holdLease(jobID, cancel, since)
	r.wg.Go(func() {
		// No gostack.Reserve here: on the success path this goroutine only
		// orchestrates (the provider call and the win run on the attempt's
		// goroutine, which reserves) and stays within its first stack; a
		// reserve was 1.7% of the router's CPU for nothing.
		defer cancel(nil)
		for {
			finished := r.runJob(ctx, jobID, fresh, plan)
			fresh, plan = nil, nil
			r.mu.Lock()
			if r.again[jobID] && !r.stopping && ctx.Err() == nil {
				delete(r.again, jobID)
				r.mu.Unlock()
				continue
			}
			// Asked for again, but not run again because the runner is
			// stopping: the request may have been a recovery claim (scan) that
			// took the job's lease for this owner after runJob released it —
			// scan saw the job still running here, so it did not give the
			// lease back itself. Give it back now, or a live replica could not
			// adopt the job until the lease expired. No runJob of this job can
			// start here any more (submit refuses while stopping), so the
			// lease released is not one this process still uses.
			dropped := r.again[jobID] && r.stopping
			delete(r.again, jobID)
			delete(r.running, jobID)
			r.mu.Unlock()
			if dropped {
				rctx, cancel := r.exitContext(ctx)
				if err := r.cfg.Store.ReleaseJobLease(rctx, jobID, r.cfg.LeaseOwner); err != nil {
					r.cfg.Log.Warn("could not give back a job claimed while stopping", "job_id", jobID, "err", err)
				}
				cancel()
			}
			if !finished {
				// Another replica may finish it, and its win notifies only
				// waiters that watch the job: wake this replica's waiters
				// (after Runs stopped saying it runs here), which then read
				// and watch it.
				r.cfg.Listener.Publish(jobID, "")
			}
			return
		}
	})
	return true
}

// Runs reports whether this process is running jobID's race now. Until it
// stops, this process announces the job's win or settlement in memory, or
// says (an announcement without a state) that it let the job go unsettled.
func (r *Runner) Runs(jobID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.running[jobID]
	return ok
}

// Cancel stops this process's work on a job that was cancelled.
func (r *Runner) Cancel(jobID string) { r.cancelWith(jobID, errJobCancelled) }

func (r *Runner) cancelWith(jobID string, cause error) {
	r.mu.Lock()
	rj, ok := r.running[jobID]
	r.mu.Unlock()
	if ok {
		rj.cancel(cause)
	}
}

// Running reports how many jobs this process is running.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}

// Cut reports whether a Stop has cut the attempts in flight, or found no
// job run left to cut: the drain is over, and a Stop now cuts nothing more.
func (r *Runner) Cut() bool { return r.base.Err() != nil }

// Stop takes no new job and waits for running jobs until ctx ends (the drain
// budget), then cuts the attempts still in flight (errShutdown: each records
// what is known of it) and waits for their orchestrations to end, leaving
// their jobs to recovery. A process that is told to stop calls Drain first,
// so that running jobs start no new attempt but a hedge that fits the drain
// (SPEC §17).
//
// The wait after the cut is bounded (Config.StopGrace, awaitRuns): a job run
// that does not end by then — its writes wait on a row another transaction
// holds, its provider's adapter ignores the cut — is logged and left to its
// lease, which is no longer renewed, and Stop returns.
//
// Stop may be called more than once at the same time (the drain's, with the
// drain budget, and a second signal's, with an ended ctx): once one of them
// has given up on the job runs, every other returns too, rather than wait out
// its own ctx for runs that were given up on.
func (r *Runner) Stop(ctx context.Context) {
	r.mu.Lock()
	r.stopping = true
	r.stopLater()
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.cancelBase(errShutdown)
	case <-r.hard.Done():
		// Another Stop (a second signal's) gave up on the runs: so does
		// this one, once that one's last wait is over (gaveUp).
		r.cancelBase(errShutdown)
		r.awaitGiveUp(done)
	case <-ctx.Done():
		r.cancelBase(errShutdown)
		r.awaitRuns(done)
	}
	r.keeperWG.Wait()
}

// handOver gives up a job this process created but will not run (it is
// stopping): its first attempt, never sent, is recorded as such and excluded
// from the job's bounds, and the job's lease is released, so another replica
// adopts it as an orphan and starts it as new.
//
// Its writes are bounded (exitWriteFor) but not tied to Stop's giving up on
// the job runs (r.hard, as exitContext is): a hand-over is no job run, Stop
// does not wait for it, and it runs on the caller's goroutine (the API's
// SubmitNew) — a job an open request creates after Stop gave up on a stuck
// run must still record its never-sent attempt and free its lease, or its
// attempt would stay in flight until its lease expired and end unknown
// (SPEC §17).
func (r *Runner) handOver(job *store.Job) {
	ctx, cancel := context.WithTimeout(context.Background(), exitWriteFor)
	defer cancel()
	for _, a := range job.Attempts {
		if err := r.cfg.Store.HandOverUnsent(ctx, job.ID, a.ID, r.cfg.LeaseOwner,
			"the request was never sent: the router was shutting down"); err != nil {
			r.cfg.Log.Warn("could not hand over a job created while stopping", "job_id", job.ID, "attempt_id", a.ID, "err", err)
		}
	}
	if len(job.Attempts) == 0 {
		if err := r.cfg.Store.ReleaseJobLease(ctx, job.ID, r.cfg.LeaseOwner); err != nil {
			r.cfg.Log.Warn("could not release the job's lease", "job_id", job.ID, "err", err)
		}
	}
	r.cfg.Listener.Publish(job.ID, "") // its waiters here read and watch it (see submit)
}
