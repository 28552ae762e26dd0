package maintenance

import (
	"context"
	"fmt"
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
	// BatchTimeout bounds each batch (default 1m, like a recovery pass's
	// steps): a batch sent on a connection gone silent would otherwise stop
	// retention until TCP gave up, some 15 minutes on Linux, or for good if
	// the host acknowledges but never answers. Waits for rows other
	// transactions hold are bounded far more tightly by the store
	// (lock_timeout, 2s).
	BatchTimeout time.Duration
	Log          *slog.Logger
}

const defaultBatchTimeout = time.Minute

// Once deletes everything currently past retention, batch by batch, and
// returns how many jobs it deleted. It goes on while a batch is full (its
// deleted and busy jobs fill it: more may be waiting), and skips in each
// batch the jobs earlier batches found busy — a job with a row another
// transaction holds — which, the oldest, would otherwise be chosen again
// every time, and fill a batch of their own once there are batch of them.
// They are tried again at the next pass. A batch that gets no answer within
// BatchTimeout ends the pass with an error; the batches before it stay
// deleted, and the next pass goes on from there.
func (c *Cleaner) Once(ctx context.Context) (int, error) {
	after, batch, timeout := c.After, c.Batch, c.BatchTimeout
	if after <= 0 {
		after = 720 * time.Hour
	}
	if batch <= 0 {
		batch = 100
	}
	if timeout <= 0 {
		timeout = defaultBatchTimeout
	}
	total := 0
	var skip []string
	for ctx.Err() == nil && (c.Leader == nil || c.Leader.IsLeader()) {
		bctx, cancel := context.WithTimeout(ctx, timeout)
		deleted, busy, err := c.Store.DeleteExpiredJobBatch(bctx, after, batch, skip)
		silent := bctx.Err() != nil && ctx.Err() == nil
		cancel()
		total += deleted
		if err != nil && silent {
			err = fmt.Errorf("a batch got no answer from the database within %s (a connection gone silent, or the database overloaded); the next pass tries again: %w", timeout, err)
		}
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
