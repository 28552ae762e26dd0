package maintenance

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Leader says whether this replica should do leader-only work now.
type Leader interface{ IsLeader() bool }

// leadGains is the optional capability of a Leader that signals each gain of
// the lead (Elector.Gained), found by type assertion as race.LeadGains is:
// with it Cleaner.Run runs a pass as soon as this replica leads — a dead
// leader's lease expired, or a draining leader stepped down — instead of at
// its next tick, up to Interval (a minute) later, so retention resumes within
// the leader lease (retention.leader_lease) as the configuration promises.
type leadGains interface{ Gained() <-chan struct{} }

// RetentionStore deletes expired jobs in batches: each call at most batch
// jobs, walking on from where the call before got to (from), returning how
// many it deleted, the jobs it chose but passed over because another
// transaction holds one of their rows, and where it got to (see
// store.DeleteExpiredJobsFrom).
type RetentionStore interface {
	DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (deleted int, busy []string, next store.RetentionCursor, err error)
}

// Observer is told what retention did (metrics.Maintenance implements it).
// Its methods must not block.
type Observer interface {
	// RetentionDeleted: a batch deleted n expired jobs (n > 0).
	RetentionDeleted(n int)
	// RetentionPassFailed: a pass of Run could not delete expired jobs or
	// old conformance runs, or could not end the removed webhooks past
	// their window.
	RetentionPassFailed()
}

// Cleaner deletes jobs (with attempts, race events, events, deliveries and key
// rows) whose idempotency key expired more than After ago, in batches of Batch
// jobs, each its own short transaction, on the leader only.
type Cleaner struct {
	Store RetentionStore
	// Leader: the pass runs only while it leads (nil: always). One that
	// signals each gain of the lead (Elector.Gained) gets a pass as soon
	// as this replica leads, not at the next tick.
	Leader   Leader
	After    time.Duration // retention.jobs; default 720h
	Batch    int           // default 100
	Interval time.Duration // default 1m
	// BatchTimeout bounds each batch, and each ending of removed webhooks
	// (default 1m, like a recovery pass's steps): a batch sent on a
	// connection gone silent would otherwise stop retention until TCP gave
	// up, some 15 minutes on Linux, or for good if the host acknowledges but
	// never answers. Waits for rows other transactions hold are bounded far
	// more tightly by the store (lock_timeout, 2s).
	BatchTimeout time.Duration
	Log          *slog.Logger
	Observer     Observer // optional
	// ConformanceAfter is retention.conformance_runs: each pass also deletes
	// the conformance runs that finished longer ago than it, but for those
	// the gate and the operator views still read (ConformanceOnce). 0 keeps
	// every run.
	ConformanceAfter time.Duration

	mu sync.Mutex // one pass at a time
	// at is where a pass that reached maxBatchesPerPass got to: the next
	// pass walks on from it. The zero cursor (the oldest entry) otherwise.
	at store.RetentionCursor
	// confAt is the same for the conformance runs' walk: the id it got to.
	confAt int64
}

const defaultBatchTimeout = time.Minute

// maxBatchesPerPass bounds a pass: 10,000 jobs at the default batch. A
// backlog (the first pass after an upgrade or a restore, or after a long
// time with no leader) would otherwise make one pass of hours, and hold off
// what Run does between passes — ending removed webhooks past their window,
// without which their owners' completion events are not written at all. The
// next pass walks on from where this one got to, and Run starts it at once,
// so a backlog drains as fast as before.
const maxBatchesPerPass = 100

// Once runs one pass: it deletes what is past retention, batch by batch, and
// returns how many jobs it deleted. Each batch walks on from where the one
// before got to (store.RetentionCursor), so it costs about the same however
// many jobs the pass has passed over, and the pass ends when no walk has more
// to choose, or after maxBatchesPerPass batches: then the next pass walks on
// from there. Jobs passed over — another transaction holds one of their rows
// (busy), or the job itself, or something else keeps them — are behind the
// cursor: they are tried again once a walk is done, by the pass after it,
// which starts from the oldest. The pass also ends as soon as this replica
// no longer leads. A batch that does not finish within BatchTimeout ends the
// pass with an error; the batches before it stay deleted, and the next pass
// tries again from the oldest.
func (c *Cleaner) Once(ctx context.Context) (int, error) {
	n, _, err := c.pass(ctx)
	return n, err
}

// pass is Once, also reporting whether it stopped at maxBatchesPerPass with
// more to choose (more).
func (c *Cleaner) pass(ctx context.Context) (total int, more bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	after := c.After
	if after <= 0 {
		after = 720 * time.Hour
	}
	return walkBatches(ctx, c, &c.at, "expired jobs", "jobs",
		func(bctx context.Context, batch int, at store.RetentionCursor) (int, store.RetentionCursor, bool, error) {
			deleted, _, next, err := c.Store.DeleteExpiredJobsFrom(bctx, after, batch, at)
			return deleted, next, next.Done(), err
		},
		func(n int) {
			if c.Observer != nil {
				c.Observer.RetentionDeleted(n)
			}
		})
}

// walkBatches is one pass of a walk of batches (c.mu held): step deletes
// one batch of what (counted in unit) from at, each within BatchTimeout, and says how many it
// deleted (told to observe when some), where it got to and whether the walk
// is done. The pass walks on from where the one before stopped (*saved), and
// ends when the walk is done, at an error, when this replica no longer
// leads, or after maxBatchesPerPass batches — then *saved keeps where it got
// to for the next pass (more), which otherwise starts from the beginning.
func walkBatches[C any](ctx context.Context, c *Cleaner, saved *C, what, unit string,
	step func(bctx context.Context, batch int, at C) (deleted int, next C, done bool, err error), observe func(n int)) (total int, more bool, err error) {
	batch, timeout := c.Batch, c.BatchTimeout
	if batch <= 0 {
		batch = 100
	}
	if timeout <= 0 {
		timeout = defaultBatchTimeout
	}
	at := *saved
	var start C
	*saved = start
	for n := 0; ctx.Err() == nil && (c.Leader == nil || c.Leader.IsLeader()); n++ {
		if n == maxBatchesPerPass {
			*saved = at
			return total, true, nil
		}
		bctx, cancel := context.WithTimeout(ctx, timeout)
		deleted, next, done, err := step(bctx, batch, at)
		timedOut := bctx.Err() != nil && ctx.Err() == nil
		cancel()
		total += deleted
		if deleted > 0 {
			observe(deleted)
		}
		if err != nil && timedOut {
			// The store cannot tell a database that did not answer (a
			// connection gone silent, an overloaded server) from a
			// batch that was slow: say what was seen.
			err = fmt.Errorf("a batch of up to %d %s did not finish within %s (the batch timeout); the %d %s deleted before it stay deleted, and the next pass tries again: %w",
				batch, what, timeout, total, unit, err)
		}
		if err != nil || done {
			return total, false, err
		}
		at = next
	}
	return total, false, ctx.Err()
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
// takes over then, not at the next replica start; the same call erases
// rotated-out webhook secrets whose overlap has ended. Errors are logged, and
// reported as failed.
func (c *Cleaner) expireWebhooks(ctx context.Context, log *slog.Logger) (failed bool) {
	ex, ok := c.Store.(webhookExpirer)
	if !ok {
		return false
	}
	// Bounded as a batch is: sent on a connection gone silent, it would
	// otherwise hold the pass that follows it.
	timeout := c.BatchTimeout
	if timeout <= 0 {
		timeout = defaultBatchTimeout
	}
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ended, err := ex.ExpireRemovedWebhooks(bctx)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Error("retention: could not end removed webhooks past their redelivery window", "err", err)
		return true
	case ended:
		log.Info("retention: removed webhooks past their redelivery window deleted; owners' stored keys' webhooks apply")
	}
	return false
}

// Run cleans every Interval until ctx ends, and at once whenever this
// replica gains the lead (a Leader that is a leadGains, as Elector is: a new
// leader's retention does not wait for its next tick). Each pass first ends
// the places kept for removed webhooks past their window and erases ended
// rotations' secrets (expireWebhooks): it costs one read when there are none,
// and a pass's deletions must not hold it off.
// Then it deletes expired jobs, then old conformance runs (when
// ConformanceAfter is set). A walk that stopped at maxBatchesPerPass with
// more to delete is followed at once by a pass that goes on with that walk
// alone, from where it stopped: the other walk, done, would start over from
// the beginning, re-reading all it kept, at every such pass of a backlog.
// The other runs again once Interval has passed, as it does without a
// backlog.
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
	// full: this pass runs every walk (the first, and one at a tick or a
	// gain of the lead); otherwise only those that stopped with more to
	// delete.
	full := true
	var jobsMore, confMore bool // the walks that stopped with more to delete
	gains, _ := c.Leader.(leadGains)
	for {
		// Taken before IsLeader is asked: a gain after the question closes
		// this channel, so none is missed (one before it is answered yes).
		var gained <-chan struct{} // nil: never ready
		if gains != nil {
			gained = gains.Gained()
		}
		runJobs, runConf := full || jobsMore, full || confMore
		jobsMore, confMore = false, false
		if c.Leader == nil || c.Leader.IsLeader() {
			failed := c.expireWebhooks(ctx, log)
			if runJobs {
				n, m, err := c.pass(ctx)
				jobsMore = m
				if err != nil && ctx.Err() == nil {
					log.Error("retention: could not delete expired jobs", "err", err)
					failed = true
				}
				if n > 0 {
					log.Info("retention: deleted expired jobs", "jobs", n, "more", m)
				}
			}
			if runConf {
				cn, cm, err := c.conformancePass(ctx)
				confMore = cm
				if err != nil && ctx.Err() == nil {
					log.Error("retention: could not delete old conformance runs", "err", err)
					failed = true
				}
				if cn > 0 {
					log.Info("retention: deleted old conformance runs", "runs", cn, "more", cm)
				}
			}
			if failed && c.Observer != nil {
				c.Observer.RetentionPassFailed()
			}
		}
		if (jobsMore || confMore) && ctx.Err() == nil {
			// A tick (or a gain of the lead) that came during the
			// backlog still runs every walk, so the other keeps its pace
			// (every Interval).
			select {
			case <-tick.C:
				full = true
			case <-gained:
				full = true
			default:
				full = false
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			full = true
		case <-gained:
			full = true
		}
	}
}
