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
	"sync"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// Target is a provider as the runner sees it: the adapter plus what routing
// needs to know about it.
type Target struct {
	Provider      providers.Provider
	Model         string
	ContextWindow int
	Encoding      string        // tokenizer encoding; "" derives it from Model
	Timeout       time.Duration // one attempt; past it the attempt is unknown
	Stream        bool          // use the streaming API when the adapter has one
}

// Route is the ordered providers of a route and its policy.
type Route struct {
	Providers   []string
	MaxInflight int
	MaxAttempts int
	Deadline    time.Duration
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
	Log        *slog.Logger
}

// Runner runs jobs in the background. Start it, Submit jobs, Stop it.
type Runner struct {
	cfg Config

	base       context.Context
	cancelBase context.CancelCauseFunc
	wg         sync.WaitGroup

	mu       sync.Mutex
	stopping bool
	running  map[string]context.CancelCauseFunc
}

// errShutdown is the cause of contexts cancelled because the process stops: the
// attempts are abandoned, not failed; their leases expire and recovery decides.
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
	base, cancel := context.WithCancelCause(context.Background())
	return &Runner{cfg: cfg, base: base, cancelBase: cancel, running: map[string]context.CancelCauseFunc{}}
}

// Submit starts running job in the background, once per process.
func (r *Runner) Submit(job *store.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return // the job stays pending for recovery by a live replica
	}
	if _, ok := r.running[job.ID]; ok {
		return
	}
	ctx, cancel := context.WithCancelCause(r.base)
	r.running[job.ID] = cancel
	r.wg.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.running, job.ID)
			r.mu.Unlock()
			cancel(nil)
		}()
		r.runJob(ctx, job)
	})
}

// Cancel stops this process's work on a job that was cancelled.
func (r *Runner) Cancel(jobID string) {
	r.mu.Lock()
	cancel, ok := r.running[jobID]
	r.mu.Unlock()
	if ok {
		cancel(errJobCancelled)
	}
}

// Running reports how many jobs this process is running.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}

// Stop waits for running jobs until ctx ends, then abandons the rest without
// recording anything (their leases expire and recovery takes over).
func (r *Runner) Stop(ctx context.Context) {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.cancelBase(errShutdown)
	case <-ctx.Done():
		r.cancelBase(errShutdown)
		<-done
	}
}
