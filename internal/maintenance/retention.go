package maintenance

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Leader says whether this replica should do leader-only work now.
type Leader interface{ IsLeader() bool }

// RetentionStore deletes expired jobs in batches: each call at most batch
// jobs, walking on from where the call before got to (from), returning how
// many it deleted, the jobs it chose but passed over because another
// transaction holds one of their rows, and where it got to (see
// store.DeleteExpiredJobsFrom).
type RetentionStore interface {
	DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (deleted int, busy []string, next store.RetentionCursor, err error)
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
// returns how many jobs it deleted. Each batch walks on from where the one
// before got to (store.RetentionCursor), so it costs about the same however
// many jobs the pass has passed over, and the pass ends when no walk has more
// to choose. Jobs passed over — another transaction holds one of their rows
// (busy), or the job itself, or something else keeps them — are behind the
// cursor: they are tried again at the next pass, which starts from the
// oldest. The pass also ends as soon as this replica no longer leads. A
// batch that does not finish within BatchTimeout ends the pass with an
// error; the batches before it stay deleted, and the next pass tries again.
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
	var at store.RetentionCursor
	for ctx.Err() == nil && (c.Leader == nil || c.Leader.IsLeader()) {
		bctx, cancel := context.WithTimeout(ctx, timeout)
		deleted, _, next, err := c.Store.DeleteExpiredJobsFrom(bctx, after, batch, at)
		timedOut := bctx.Err() != nil && ctx.Err() == nil
		cancel()
		total += deleted
		if err != nil && timedOut {
			// The store cannot tell a database that did not answer (a
			// connection gone silent, an overloaded server) from a
			// batch that was slow: say what was seen.
			err = fmt.Errorf("a batch of up to %d expired jobs did not finish within %s (the batch timeout); the %d jobs deleted before it stay deleted, and the next pass tries again: %w",
				batch, timeout, total, err)
		}
		if err != nil || next.Done() {
			return total, err
		}
		at = next
	}
	return total, ctx.Err()
}

// webhookExpirer is the optional capability of a RetentionStore that ends
// the places kept for removed webhooks past their window
// (store.ExpireRemovedWebhooks): found by type assertion, as pgx finds its
// optional interfaces.
type webhookExpirer interface {
	ExpireRemovedWebhooks(ctx context.Context) (bool, error)
}

// expireWebhooks ends the places kept for removed webhooks past their window
// when the store can (webhookExpirer), so an owner's stored key's webhook
// takes over then, not at the next replica start. Errors are logged.
func (c *Cleaner) expireWebhooks(ctx context.Context, log *slog.Logger) {
	ex, ok := c.Store.(webhookExpirer)
	if !ok {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, defaultBatchTimeout)
	defer cancel()
	ended, err := ex.ExpireRemovedWebhooks(bctx)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Error("retention: could not end removed webhooks past their redelivery window", "err", err)
	case ended:
		log.Info("retention: removed webhooks past their redelivery window deleted; owners' stored keys' webhooks apply")
	}
}

// Run cleans every Interval until ctx ends; each pass also ends the places
// kept for removed webhooks past their window (expireWebhooks).
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
			c.expireWebhooks(ctx, log)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
