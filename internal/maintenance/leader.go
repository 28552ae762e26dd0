package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LeaseStore takes, renews and gives up a leader lease.
type LeaseStore interface {
	TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	Resign(ctx context.Context, name, holder string) error
}

// Elector keeps this replica's claim on a leader lease. The lease row lives in
// PostgreSQL and expires on the database clock, so when the leader dies another
// replica takes over within TTL plus one renewal interval.
type Elector struct {
	store  LeaseStore
	name   string
	holder string
	ttl    time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	until time.Time // this replica leads until then (local monotonic clock)
}

// NewElector builds an elector for role name held as holder (the replica id).
// ttl is the lease; it is renewed every ttl/3. Default 15s.
func NewElector(st LeaseStore, name, holder string, ttl time.Duration, log *slog.Logger) *Elector {
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Elector{store: st, name: name, holder: holder, ttl: ttl, log: log}
}

// IsLeader reports whether this replica holds the lease now. It turns false on
// its own when renewals stop succeeding, before the lease expires in the
// database (the local deadline is counted from before the renewal was sent).
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Before(e.until)
}

// Once tries to take or renew the lease once and reports whether it leads.
func (e *Elector) Once(ctx context.Context) bool {
	sent := time.Now()
	ok, err := e.store.TryLead(ctx, e.name, e.holder, e.ttl)
	was := e.IsLeader()
	e.mu.Lock()
	if err == nil && ok {
		// Stop a little before the database would let another replica in.
		e.until = sent.Add(e.ttl * 9 / 10)
	} else {
		e.until = time.Time{}
	}
	e.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil:
		e.log.Warn("leader lease: could not renew", "role", e.name, "err", err)
	case ok && !was:
		e.log.Info("leader lease: this replica now leads", "role", e.name)
	case !ok && was:
		e.log.Warn("leader lease: lost", "role", e.name)
	}
	return err == nil && ok
}

// Run renews the lease every ttl/3 until ctx ends, then resigns so another
// replica takes over at once.
func (e *Elector) Run(ctx context.Context) {
	tick := time.NewTicker(e.ttl / 3)
	defer tick.Stop()
	for {
		e.Once(ctx)
		select {
		case <-ctx.Done():
			e.mu.Lock()
			e.until = time.Time{}
			e.mu.Unlock()
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := e.store.Resign(rctx, e.name, e.holder); err != nil {
				e.log.Warn("leader lease: could not resign", "role", e.name, "err", err)
			}
			return
		case <-tick.C:
		}
	}
}
