package maintenance

import (
	"context"
	"log/slog"
	"time"
)

// Leader says whether this replica should do leader-only work now.
type Leader interface{ IsLeader() bool }

// RetentionStore deletes expired jobs in batches: each call at most batch
// jobs, none of those in skip, returning how many it deleted and the jobs it
// chose but passed over because another transaction holds one of their rows
// (see store.DeleteExpiredJobBatch).
type RetentionStore interface {
	DeleteExpiredJobBatch(ctx context.Context, after time.Duration, batch int, skip []string) (deleted int, busy []string, err error)
}

// Cleaner deletes jobs (with attempts, race events, events, deliveries and key
// rows) whose idempotency key expired more than After ago, in batches of Batch
// jobs, each its own short transaction, on the leader only.
type Cleaner struct {
	Store    RetentionStore
	Leader   Leader
	After    time.Duration // retention.jobs; default 720h
	Batch    int           // default 100
	Interval time.Duration // default 1m
	Log      *slog.Logger
}

// Once deletes everything currently past retention, batch by batch, and
// returns how many jobs it deleted. It goes on while a batch is full (its
// deleted and busy jobs fill it: more may be waiting), and skips in each
// batch the jobs earlier batches found busy — a job with a row another
// transaction holds — which, the oldest, would otherwise be chosen again
// every time, and fill a batch of their own once there are batch of them.
// They are tried again at the next pass.
func (c *Cleaner) Once(ctx context.Context) (int, error) {
	after, batch := c.After, c.Batch
	if after <= 0 {
		after = 720 * time.Hour
	}
	if batch <= 0 {
		batch = 100
	}
	total := 0
	var skip []string
	for ctx.Err() == nil && (c.Leader == nil || c.Leader.IsLeader()) {
		deleted, busy, err := c.Store.DeleteExpiredJobBatch(ctx, after, batch, skip)
		total += deleted
		if err != nil || deleted+len(busy) < batch {
			return total, err
		}
		skip = append(skip, busy...)
	}
	return total, ctx.Err()
}

// Run cleans every Interval until ctx ends.
func (c *Cleaner) Run(ctx context.Context) {
	interval := c.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if c.Leader == nil || c.Leader.IsLeader() {
			n, err := c.Once(ctx)
			if err != nil && ctx.Err() == nil {
				log.Error("retention: could not delete expired jobs", "err", err)
			}
			if n > 0 {
				log.Info("retention: deleted expired jobs", "jobs", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
