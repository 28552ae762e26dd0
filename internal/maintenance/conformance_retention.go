package maintenance

import (
	"context"
	"time"
)

// conformancePruner is the optional capability of a RetentionStore that
// deletes old conformance runs (store.DeleteOldConformanceRunsFrom): found
// by type assertion, as webhookExpirer is.
type conformancePruner interface {
	DeleteOldConformanceRunsFrom(ctx context.Context, after time.Duration, batch int, from int64) (deleted int, next int64, done bool, err error)
}

// ConformanceObserver is the optional capability of an Observer that is told
// how many old conformance runs retention deleted (metrics.Maintenance
// implements it). Its method must not block.
type ConformanceObserver interface {
	// ConformanceRunsDeleted: a batch deleted n old conformance runs (n > 0).
	ConformanceRunsDeleted(n int)
}

// ConformanceOnce runs one pass over the conformance runs: it deletes those
// that finished more than ConformanceAfter ago, on the database clock, but
// for the runs the gate and the operator views still read (each group's
// latest run and latest pass, and the runs that finished while the latest
// ran: store.DeleteOldConformanceRunsFrom), batch by batch, and returns how
// many it deleted. With ConformanceAfter 0, or a store without the
// capability, it deletes nothing. Like Once it stops after maxBatchesPerPass
// batches (the next pass walks on from there), when this replica no longer
// leads, or at a batch that does not finish within BatchTimeout.
func (c *Cleaner) ConformanceOnce(ctx context.Context) (int, error) {
	n, _, err := c.conformancePass(ctx)
	return n, err
}

// conformancePass is ConformanceOnce, also reporting whether it stopped at
// maxBatchesPerPass with more to examine (more).
func (c *Cleaner) conformancePass(ctx context.Context) (total int, more bool, err error) {
	pr, ok := c.Store.(conformancePruner)
	if !ok || c.ConformanceAfter <= 0 {
		return 0, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return walkBatches(ctx, c, &c.confAt, "old conformance runs", "runs",
		func(bctx context.Context, batch int, at int64) (int, int64, bool, error) {
			return pr.DeleteOldConformanceRunsFrom(bctx, c.ConformanceAfter, batch, at)
		},
		func(n int) {
			if o, ok := c.Observer.(ConformanceObserver); ok {
				o.ConformanceRunsDeleted(n)
			}
		})
}
