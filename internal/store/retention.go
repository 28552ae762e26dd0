package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultRedeliveryWindow is how long an event may stay pending and still be
// delivered with the default webhook settings: retried until it is
// webhooks.retry_for (24h) old, the last retry up to webhooks.backoff_cap (1h)
// later, plus up to 30s of spread when a receiver's Retry-After set that
// wait, the failed try before it lasting up to webhooks.timeout (10s) and
// 15s for its reads and record (config.DeliveryTryMax), plus 7 minutes for
// what a due delivery may still wait (config.RedeliveryMargin;
// config.Webhooks.RedeliveryWindow). Options.RedeliveryWindow defaults to it.
const DefaultRedeliveryWindow = 24*time.Hour + time.Hour + 30*time.Second + 10*time.Second + 15*time.Second + 7*time.Minute

// DeleteExpiredJobs deletes at most batch jobs whose idempotency key expired
// more than after ago (the key still bound to the job, or released to a newer
// job — see released_keys), with their attempts, race events, events,
// deliveries and key rows, in one short transaction, and returns how many jobs
// it deleted. Only terminal jobs are touched: a live job's key never expires.
// A job with an event still pending (not yet delivered, being retried) and
// younger than Options.RedeliveryWindow is kept until the event is delivered
// or abandoned, or the window passes (a delivery that old is never retried:
// webhook.Worker abandons it at its next try). A job and then every row of
// it the batch deletes are locked with SKIP LOCKED before anything is
// deleted: a job that another transaction holds, or any of whose rows it
// holds, is passed over, so the cleaner never waits on a job in use, and
// lock_timeout bounds any other wait.
func (s *Store) DeleteExpiredJobs(ctx context.Context, after time.Duration, batch int) (int, error) {
	deleted, _, _, err := s.deleteExpiredJobs(ctx, after, s.opt.RedeliveryWindow, batch, RetentionCursor{})
	return deleted, err
}

// RetentionCursor is how far a retention pass has got along each of its
// walks (keys bound to their job, by expiry; keys released to a newer job, by
// expiry). The zero value starts both walks at their oldest entry.
type RetentionCursor struct {
	ByKey, ByRelease RetentionPosition
}

// RetentionPosition is where one walk of a pass has got to: the entry of the
// last job it chose (the key's expiry, then the job's id), or Done once it
// found fewer jobs than it had places for — nothing more to choose in this
// pass.
type RetentionPosition struct {
	At    time.Time // zero: from the walk's oldest entry
	JobID string
	Done  bool
}

// Done reports whether both walks are done: the pass has chosen every job
// it could.
func (c RetentionCursor) Done() bool { return c.ByKey.Done && c.ByRelease.Done }

// DeleteExpiredJobsFrom is DeleteExpiredJobs walking on from where the batch
// before it got to (from; the zero cursor for a pass's first batch)
// and returning where this one got to, for the next. Every batch reads about
// batch expiry entries, however many jobs earlier batches of the pass
// passed over: a job kept (another transaction holds its row, it changed
// since its key expired, an event of it is pending) or busy (another
// transaction holds one of its rows) is behind the cursor and tried again at
// the next pass, which starts from the zero cursor.
func (s *Store) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from RetentionCursor) (deleted int, busy []string, next RetentionCursor, err error) {
	return s.deleteExpiredJobs(ctx, after, s.opt.RedeliveryWindow, batch, from)
}

// deleteExpiredJobs is DeleteExpiredJobs keeping jobs with an event pending for
// less than redelivery.
//
// Each expiry index (keys bound to their job, keys released to a newer job)
// is walked oldest first, from where the batch before got to (from), and
// every reason to keep a job is checked, and the job
// locked, before that walk's LIMIT counts it: a kept job (its row not
// terminal, changed since its key expired, still holding a live key, an event
// pending, or locked by another transaction) never takes a batch's place.
// Checked after the LIMIT, as they were, the oldest kept jobs took every
// place of every pass, and nothing behind them was ever deleted.
//
// The rows of the chosen jobs are then locked (busyRowsSQL), with SKIP
// LOCKED, table by table, in one statement: a job with a row another
// transaction holds is passed over and returned as busy, and the DELETEs of
// the rest, sent together in one round trip, find every row they remove
// locked by this transaction and wait for nothing. Before, SKIP LOCKED
// skipped only locked job rows: one locked row of a chosen job (an
// operator's UPDATE in an open session) made its DELETE wait for
// lock_timeout and roll back the whole batch, and as the walk is oldest
// first, every pass chose that job again and deleted nothing while the lock
// was held. These rows are locked after the walk, not in it: a locking
// subquery per candidate and table cost about half a millisecond each (with
// 20,000 expired jobs, the choice of a batch of 100 took 0.5 s instead of
// 1 ms), written as NOT EXISTS the planner made them anti-joins that locked
// the rows of every expired job, and an index lookup of events per candidate
// would read job_events where the walk must not (see below).
// So a busy job does take a place in its batch; the cursor returned (next)
// is past it, so the pass's later batches do not choose it again.
//
// The pending check is a range scan of job_events_job (job_id, created_at)
// per candidate, reading the events without locking them: an event is written
// only with its job's state change, which locks the job row (taken here with
// SKIP LOCKED) and moves its updated_at out of range. Locking re-checks the
// job row's own conditions on its latest version, so a job revived or changed
// since the scan's snapshot is left alone.
//
// The check is made only when after is shorter than redelivery (plus
// eventSkew): otherwise no candidate can have an event it would keep. An
// event is written only in the transaction of its job's state change, by the
// outbox trigger (migrations 0006, 0017) or the batched win (winSQL), and
// that statement sets the job's updated_at to now() as well, so the event's
// created_at is the job's updated_at then; later changes move updated_at
// forward (but for eventSkew). A candidate was last updated at least after
// ago, so each of its events was written at least after - eventSkew ago, and
// none is younger than a window that much shorter. With the default settings (retention.jobs 720h, a window of
// about 25h) the check never matches, yet during a webhook outage, with
// thousands of events pending, the planner turned it into a scan of every
// pending event per candidate: 0.4-1.2 s a batch of 100.
func (s *Store) deleteExpiredJobs(ctx context.Context, after, redelivery time.Duration, batch int, from RetentionCursor) (deleted int, busy []string, next RetentionCursor, err error) {
	if from.Done() {
		return 0, nil, from, nil
	}
	q, args := expiredJobsArgs(after, redelivery, batch, from)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		deleted, busy, next = 0, nil, from // a retried transaction's
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		var ids []string
		next, ids, err = chosenJobs(rows, batch, from)
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, busyRowsSQL, ids)
		if err != nil {
			return err
		}
		busy, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(busy, id) })
		if len(ids) == 0 {
			return nil
		}
		b := &pgx.Batch{}
		for _, q := range []string{
			`DELETE FROM race_events WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM attempts WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM job_events WHERE job_id = ANY($1::uuid[])`, // deliveries cascade
			`DELETE FROM idempotency_keys WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM released_keys WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM jobs WHERE id = ANY($1::uuid[])`,
		} {
			b.Queue(q, ids)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		deleted = len(ids)
		return nil
	})
	if err != nil {
		return 0, nil, from, fmt.Errorf("delete expired jobs: %w", err)
	}
	return deleted, busy, next, nil
}

// expiredJobsArgs is the statement that chooses a batch (expiredJobsSQL, or
// expiredJobsNoEventCheckSQL when no candidate can have an event it would
// keep) and its arguments.
func expiredJobsArgs(after, redelivery time.Duration, batch int, from RetentionCursor) (string, []any) {
	args := []any{after, batch}
	for _, p := range []RetentionPosition{from.ByKey, from.ByRelease} {
		var at, id any // NULL: from the walk's oldest entry
		if !p.At.IsZero() {
			at, id = p.At, p.JobID
		}
		args = append(args, at, id, p.Done)
	}
	if after >= redelivery && after-redelivery >= eventSkew { // a window may be near MaxInt64: no sum
		return expiredJobsNoEventCheckSQL, args
	}
	return expiredJobsSQL, append(args, redelivery)
}

// chosenJobs reads the jobs a batch chose (each row: the job, whether by_key
// chose it, the expiry it was chosen by) and returns them, once each (a job
// may be chosen by both walks), with where each walk got to. A walk that
// chose fewer jobs than it had places for ($2 for by_release, what
// by_release left for by_key) is done for this pass.
func chosenJobs(rows pgx.Rows, batch int, from RetentionCursor) (next RetentionCursor, ids []string, err error) {
	next = from
	var byKey, byRelease int
	var id string
	var isKey bool
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&id, &isKey, &at}, func() error {
		walk := &next.ByRelease
		if isKey {
			walk, byKey = &next.ByKey, byKey+1
		} else {
			byRelease++
		}
		if at.After(walk.At) || at.Equal(walk.At) && id > walk.JobID { // uuid order is the order of its text
			walk.At, walk.JobID = at, id
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return from, nil, err
	}
	next.ByRelease.Done = next.ByRelease.Done || byRelease < batch
	next.ByKey.Done = next.ByKey.Done || byKey < batch-byRelease
	return next, ids, nil
}

// busyRowsSQL locks, with SKIP LOCKED, every row of the jobs $1 that the
// batch's DELETEs remove — attempts, race events, events, their delivery
// tries, key rows, released keys — and returns the jobs with a row it could
// not lock: another transaction holds it. Per table, the job ids of its rows
// less (EXCEPT ALL) those of the rows it locked leave one id per row held;
// EXCEPT and UNION read every branch to its end, so every row is tried.
// A row counted but gone by the time it is locked (deleted meanwhile) makes
// its job busy too, for this batch only. A row added later is no wait for the
// DELETEs: adding an attempt, race event, event or delivery try takes a lock
// on the row it refers to (the job's, held here since the walk, or the
// event's, held since this statement), so it waits for this transaction
// instead.
const busyRowsSQL = `
	SELECT job_id::text FROM (
	    (SELECT job_id FROM attempts WHERE job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT job_id FROM attempts WHERE job_id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED) l)
	    UNION
	    (SELECT job_id FROM race_events WHERE job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT job_id FROM race_events WHERE job_id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED) l)
	    UNION
	    (SELECT job_id FROM job_events WHERE job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT job_id FROM job_events WHERE job_id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED) l)
	    UNION
	    (SELECT e.job_id FROM job_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT e.job_id FROM job_events e JOIN webhook_deliveries d ON d.event_id = e.id
	                         WHERE e.job_id = ANY($1::uuid[]) FOR UPDATE OF d SKIP LOCKED) l)
	    UNION
	    (SELECT job_id FROM idempotency_keys WHERE job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT job_id FROM idempotency_keys WHERE job_id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED) l)
	    UNION
	    (SELECT job_id FROM released_keys WHERE job_id = ANY($1::uuid[])
	     EXCEPT ALL
	     SELECT job_id FROM (SELECT job_id FROM released_keys WHERE job_id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED) l)
	) busy`

// eventSkew is how much later than its job's updated_at an event's created_at
// may be after all. Both are now(), the start of the transaction that wrote
// them: a transition that began before another one's and locked the job after
// that one committed (it waited for the lock) stamps the job with an earlier
// time than the other's event. Transactions that change a job's state take
// seconds at most; an hour keeps the check where after and the window are
// that close, and changes nothing for the default settings.
const eventSkew = time.Hour

// expiredJobsSQL selects and locks up to $2 jobs whose key expired more than
// $1 ago (see deleteExpiredJobs), each walk from where the batch before it
// got to — by_key after the entry ($3, $4) unless done
// ($5), by_release after ($6, $7) unless done ($8) — keeping those with an
// event pending for less than $9; expiredJobsNoEventCheckSQL is the same
// without that check, for when it cannot match.
var (
	expiredJobsSQL             = expiredJobsQuery(pendingEventCheck)
	expiredJobsNoEventCheckSQL = expiredJobsQuery("")
)

// pendingEventCheck keeps a job with an event pending for less than $9.
const pendingEventCheck = `
			      AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id
			                      AND e.created_at > now() - $9::interval AND e.status = 'pending')`

// expiredJobsQuery is the statement that chooses a batch. Each walk goes on
// from the entry the batch before it chose last (a keyset on the expiry and
// the job's id: keys claimed together expire at the same instant), so a
// batch reads about as many entries as it has places, however many jobs the
// batches before it passed over; before, every batch walked from the oldest
// entry and left out the jobs found busy so far by id, and with thousands
// held by another transaction a batch took seconds, then minutes, and each
// pass failed before reaching the jobs behind them. by_key gets only the
// places by_release left (released keys are few: a key is released only when
// a new job reuses it): each walk locks the jobs it chooses, and when each
// locked up to $2 jobs and the batch kept $2, the rest stayed locked until
// the batch ended, neither deleted nor reported busy.
func expiredJobsQuery(eventCheck string) string {
	return `
			WITH by_release AS (
			    SELECT j.id, r.expired_at AS at FROM released_keys r JOIN jobs j ON j.id = r.job_id
			    WHERE NOT $8::bool
			      AND r.expired_at <= now() - $1::interval
			      AND r.expired_at >= coalesce($6::timestamptz, '-infinity')
			      AND (r.expired_at, r.job_id) > (coalesce($6::timestamptz, '-infinity'), coalesce($7::uuid, '00000000-0000-0000-0000-000000000000'))
			      AND j.state IN ('succeeded', 'failed', 'cancelled')
			      AND j.updated_at <= now() - $1::interval
			      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k2
			                      WHERE k2.job_id = j.id AND (k2.expires_at IS NULL OR k2.expires_at > now() - $1::interval))` + eventCheck + `
			    ORDER BY r.expired_at, r.job_id LIMIT $2
			    FOR UPDATE OF j SKIP LOCKED
			), by_key AS (
			    SELECT j.id, k.expires_at AS at FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
			    WHERE NOT $5::bool
			      AND k.expires_at IS NOT NULL AND k.expires_at <= now() - $1::interval
			      AND k.expires_at >= coalesce($3::timestamptz, '-infinity')
			      AND (k.expires_at, k.job_id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::uuid, '00000000-0000-0000-0000-000000000000'))
			      AND j.state IN ('succeeded', 'failed', 'cancelled')
			      AND j.updated_at <= now() - $1::interval` + eventCheck + `
			    ORDER BY k.expires_at, k.job_id LIMIT $2 - (SELECT count(*) FROM by_release)
			    FOR UPDATE OF j SKIP LOCKED
			)
			SELECT id::text, true, at FROM by_key
			UNION ALL
			SELECT id::text, false, at FROM by_release`
}
