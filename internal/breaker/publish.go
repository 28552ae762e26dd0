package breaker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
)

// PublisherOptions tune a Publisher.
type PublisherOptions struct {
	// Replica is this process's id (the same as the race's LeaseOwner).
	Replica string
	// Interval between regular publications (default 5s); a state change is
	// published at once.
	Interval time.Duration
	// PruneAfter deletes rows of replicas silent for this long (default 1h).
	// Readers already ignore rows older than their own staleness bound.
	PruneAfter time.Duration
	Log        *slog.Logger
	// Published, when set, is called after each publication of Run with its
	// error (for tests and health reporting). It must not block.
	Published func(error)
}

// Publisher writes a Set's states to PostgreSQL.
type Publisher struct {
	set *Set
	st  *store.Store
	opt PublisherOptions

	mu sync.Mutex // one publication at a time, so published matches the rows
	// published is, per provider, the ChangedAt of the state this replica
	// last published successfully: a snapshot with another ChangedAt holds a
	// change the rows have not seen, even when its state is the one they show.
	published map[string]time.Time
}

// NewPublisher makes a publisher of set's states as replica opt.Replica.
func NewPublisher(set *Set, st *store.Store, opt PublisherOptions) *Publisher {
	if opt.Interval <= 0 {
		opt.Interval = 5 * time.Second
	}
	if opt.PruneAfter <= 0 {
		opt.PruneAfter = time.Hour
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	return &Publisher{set: set, st: st, opt: opt, published: map[string]time.Time{}}
}

// StaleAfter is the staleness bound readers should use for a publisher with
// the given interval: three missed publications.
func StaleAfter(interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	return 3 * interval
}

// Publish writes the current states once. A breaker that changed state since
// the last successful publication gets a new changed_at even when its state
// is the published one (it re-opened, or closed again, in between). Its
// write is the router's monitoring of itself, not a job's work: it is not
// counted in router_db_* (metrics.Uncounted).
func (p *Publisher) Publish(ctx context.Context) error {
	ctx = metrics.Uncounted(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	snap := p.set.Snapshot()
	rows := make([]store.BreakerState, 0, len(snap))
	for _, s := range snap {
		rows = append(rows, store.BreakerState{
			Provider: s.Provider, State: s.State,
			Requests: int64(s.Counts.Requests), Successes: int64(s.Counts.TotalSuccesses),
			Failures: int64(s.Counts.TotalFailures), Exclusions: int64(s.Counts.TotalExclusions),
			ConsecutiveSuccesses: int64(s.Counts.ConsecutiveSuccesses), ConsecutiveFailures: int64(s.Counts.ConsecutiveFailures),
			SinceChange: time.Since(s.ChangedAt),
			Changed:     !p.published[s.Provider].Equal(s.ChangedAt),
		})
	}
	if err := p.st.UpsertBreakerStates(ctx, p.opt.Replica, rows); err != nil {
		return err
	}
	for _, s := range snap {
		p.published[s.Provider] = s.ChangedAt
	}
	return nil
}

// Run publishes now, then on every state change and every Interval, until ctx
// ends; then it removes this replica's rows (an orderly stop disappears at
// once; a crashed replica ages out). Errors are logged, never fatal: the
// breakers keep working without the database. None of its database work is
// counted in router_db_* (metrics.Uncounted): it runs every Interval, jobs or
// none.
func (p *Publisher) Run(ctx context.Context) {
	ctx = metrics.Uncounted(ctx)
	tick := time.NewTicker(p.opt.Interval)
	defer tick.Stop()
	lastPrune := time.Time{}
	for {
		pctx, cancel := context.WithTimeout(ctx, p.opt.Interval)
		err := p.Publish(pctx)
		if err != nil && ctx.Err() == nil {
			p.opt.Log.Warn("could not publish circuit breaker states", "err", err)
		}
		if time.Since(lastPrune) > p.opt.PruneAfter/4 {
			lastPrune = time.Now()
			if n, err := p.st.PruneBreakerStates(pctx, p.opt.PruneAfter); err != nil && ctx.Err() == nil {
				p.opt.Log.Warn("could not prune stale circuit breaker states", "err", err)
			} else if n > 0 {
				p.opt.Log.Info("pruned circuit breaker states of silent replicas", "rows", n)
			}
		}
		cancel()
		if p.opt.Published != nil {
			p.opt.Published(err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if err := p.st.DeleteBreakerStates(dctx, p.opt.Replica); err != nil {
				p.opt.Log.Warn("could not remove this replica's circuit breaker states", "err", err)
			}
			cancel()
			return
		case <-p.set.Changed():
		case <-tick.C:
		}
	}
}
