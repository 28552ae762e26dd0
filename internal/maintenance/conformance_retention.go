package maintenance

import (
	"context"
	"fmt"
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
	batch, timeout := c.Batch, c.BatchTimeout
	if batch <= 0 {
		batch = 100
	}
	if timeout <= 0 {
		timeout = defaultBatchTimeout
	}
	at := c.confAt
	c.confAt = 0
	for n := 0; ctx.Err() == nil && (c.Leader == nil || c.Leader.IsLeader()); n++ {
		if n == maxBatchesPerPass {
			c.confAt = at
			return total, true, nil
		}
		bctx, cancel := context.WithTimeout(ctx, timeout)
		deleted, next, done, err := pr.DeleteOldConformanceRunsFrom(bctx, c.ConformanceAfter, batch, at)
		timedOut := bctx.Err() != nil && ctx.Err() == nil
		cancel()
		total += deleted
		if o, ok := c.Observer.(ConformanceObserver); ok && deleted > 0 {
			o.ConformanceRunsDeleted(deleted)
		}
		if err != nil && timedOut {
			err = fmt.Errorf("a batch of up to %d old conformance runs did not finish within %s (the batch timeout); the %d runs deleted before it stay deleted, and the next pass tries again: %w",
				batch, timeout, total, err)
		}
		if err != nil || done {
			return total, false, err
		}
		at = next
	}
	return total, false, ctx.Err()
}
