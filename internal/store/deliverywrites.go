package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// deliveryWrite is one of a webhook delivery's two writes waiting for its
// batch: the freeze of an event's body before its first try
// (FreezeEventBody), or the record of a try (RecordDelivery). Concurrent
// deliveries' writes go out together, as the success path's claims and wins
// do (group): one round trip and one commit for many deliveries, where each
// delivery paid two of each and, at River's worker count, kept a hundred
// backends busy committing side by side.
type deliveryWrite struct {
	freeze *freezeRequest
	record *DeliveryTry
	done   chan struct{}
	err    error
	status string // a record's: the event's status after its batch (recordSQL)
	// blocked: run again alone in its batch, the write still found its event
	// row held past batchLockWait (err is lock_not_available); its caller
	// runs it once more, alone, waiting up to aloneLockWait (writeDelivery).
	blocked bool
}

type freezeRequest struct {
	id   string
	body []byte
	out  []byte // the body the event now holds: body, or the one frozen before
}

// eventID is the event the write is about.
func (w *deliveryWrite) eventID() string {
	if w.freeze != nil {
		return w.freeze.id
	}
	return w.record.EventID
}

// deliveryBatchSize is the most writes carried by one batch; as for the
// success path, a second batch goes out only when a full one waits.
const deliveryBatchSize = 64

// deliveryBatchBytes bounds the event bodies one batch carries: a body can
// be several MiB (a job's input and result, escaped), and 64 of them in one
// bytea array would pass PostgreSQL's 1 GB limit on one value — the batch
// would fail, and every body sit in memory at once on both sides. A body
// larger than this goes alone.
const deliveryBatchBytes = 8 << 20

// bytes is the write's weight in a batch (group.weight): a freeze's body;
// a record's excerpt and texts are small and bounded.
func (w *deliveryWrite) bytes() int {
	if w.freeze != nil {
		return len(w.freeze.body)
	}
	return 1
}

// freezeBatchSQL freezes the bodies of events, each id once (freezeStmt). The
// freeze also drops the event's snapshot (migration 0017): once the body is
// fixed, the job as the transition left it is in the body itself.
const freezeBatchSQL = `
UPDATE job_events e SET body = coalesce(e.body, i.body), snapshot = NULL
FROM (SELECT * FROM unnest($1::uuid[], $2::bytea[]) AS i(id, body)) i
WHERE e.id = i.id
RETURNING e.id::text, e.body`

// recordSQL records tries: a webhook_deliveries row for every one, and the
// event's status, last_error and delivered_at only while it is pending. Once
// delivered or abandoned an event stays so: a failed try's record that lands
// late (its writer gave up after the worker's record timeout but the write
// stayed queued, or ran in a batch beside a later one's) must not turn a
// delivered event pending again, for its delivery job has ended and nothing
// would deliver it. Of one event's records in a batch, the first that ends the
// delivery decides, else the last: as if they ran one after the other.
//
// A try's number is the event's count of recorded tries, taken under the
// event's row lock, not the caller's DeliveryTry.Try: two tries that read the
// event before either was recorded (a late record, and the retry River ran
// meanwhile) still get distinct numbers, in the order of the history
// (webhook_deliveries' id). A try of no event keeps failing on its foreign
// key: the insert takes every input row, updated or not.
//
// A try's record clears the event's send lease (SendClaim) when the try
// still holds it (sender is its token), and leaves another try's alone: a
// try whose lease ran out before its record, and was claimed by another try
// meanwhile, must not free that try's lease while it sends.
//
// It returns each event's status after the statement, which may not be the
// one a try computed: a try that gives up on its event (abandoned) recorded
// after another that delivered it leaves it delivered. The caller tells of
// the try by what was stored (RecordDelivery).
const recordSQL = `
WITH i AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::bigint[], $5::int[], $6::text[], $7::text[], $8::text[])
        WITH ORDINALITY AS i(event_id, url, started_at, latency_ms, status_code, error, status, sender, n)
), o AS (
    SELECT DISTINCT ON (event_id) event_id, status, error, count(*) OVER (PARTITION BY event_id) AS k,
        array_agg(sender) OVER (PARTITION BY event_id) AS senders
    FROM i ORDER BY event_id, status = 'pending', CASE WHEN status = 'pending' THEN -n ELSE n END
), u AS (
    UPDATE job_events e SET tries = e.tries + o.k,
        sending_until = CASE WHEN e.sender = ANY(o.senders) THEN NULL ELSE e.sending_until END,
        sender = CASE WHEN e.sender = ANY(o.senders) THEN NULL ELSE e.sender END,
        status = CASE WHEN e.status = 'pending' THEN o.status ELSE e.status END,
        last_error = CASE WHEN e.status = 'pending' THEN o.error ELSE e.last_error END,
        delivered_at = CASE WHEN e.status <> 'pending' THEN e.delivered_at WHEN o.status = 'delivered' THEN now() END
    FROM o
    WHERE e.id = o.event_id
    RETURNING e.id, e.tries - o.k AS before, e.status
), d AS (
    INSERT INTO webhook_deliveries (event_id, try, url, started_at, latency_ms, status_code, error)
    SELECT i.event_id, coalesce(u.before, 0) + row_number() OVER (PARTITION BY i.event_id ORDER BY i.n),
        i.url, i.started_at, i.latency_ms, i.status_code, i.error
    FROM i LEFT JOIN u ON u.id = i.event_id
    ORDER BY i.n
)
SELECT i.n, u.status FROM i JOIN u ON u.id = i.event_id`

// writeDelivery queues w for the next batch and waits for it, or for ctx. A
// write whose event row another transaction held past its batch's lock wait
// (blocked) is run again here, alone, on the caller's goroutine, waiting for
// the row up to aloneLockWait while the batches go on without it.
func (s *Store) writeDelivery(ctx context.Context, w *deliveryWrite) error {
	w.done = make(chan struct{})
	if err := s.deliveries.await(ctx, w, w.done); err != nil {
		return fmt.Errorf("webhook delivery write: %w", err)
	}
	if w.blocked {
		w.blocked = false
		// On its caller's context (the delivery's), bounded by
		// deliveryAloneTimeout within writeDeliveryAlone, well inside
		// runAlone's own bound (execTimeout+wait).
		// A write that gets no alone turn is not sent: it stays blocked,
		// with its batch's error.
		_ = s.runAlone(ctx, &s.aloneOwed, s.deliveries.onAlone, func(ctx context.Context, wait time.Duration) {
			w.err = s.writeDeliveryAlone(ctx, w, wait)
		})
	}
	return w.err
}

// execDeliveryWrites runs one batch: the freezes, then the records, in one
// transaction, each event's row locked in id order. If that fails, each write
// runs again on its own (writeDeliveryAlone), so one write's failure (an event
// deleted meanwhile, an event row another transaction holds) is that write's
// alone. Both statements are safe to run again after a commit whose answer
// was lost: a freeze keeps the body frozen first, and a record adds the try
// again (an extra row in the event's history, as a delivery retried after a
// crash would).
func (s *Store) execDeliveryWrites(ctx context.Context, batch []*deliveryWrite) {
	// Stable: one event's records keep the order they were queued in (recordSQL).
	slices.SortStableFunc(batch, func(a, b *deliveryWrite) int { return strings.Compare(a.eventID(), b.eventID()) })
	var freezes, records []*deliveryWrite
	for _, w := range batch {
		if w.freeze != nil {
			freezes = append(freezes, w)
		} else {
			records = append(records, w)
		}
	}
	var stmts []batchedStmt
	if len(freezes) > 0 {
		stmts = append(stmts, freezeStmt(freezes))
	}
	if len(records) > 0 {
		stmts = append(stmts, recordStmt(records))
	}
	err := retryRolledBack(func() error {
		for _, w := range freezes {
			w.freeze.out = nil
		}
		return s.queryBatched(ctx, batchLockWait, stmts...)
	})
	if err == nil {
		s.committed("delivery", len(batch)) // before any write's caller is told (see committed)
	}
	for _, w := range batch {
		switch {
		case err != nil:
			w.err = s.writeDeliveryAlone(ctx, w, batchLockWait)
			w.blocked = Busy(w.err)
		case w.freeze != nil && w.freeze.out == nil:
			w.err = ErrNotFound
		}
		close(w.done)
	}
}

// freezeStmt is the freeze statement for ws. Each event goes out once, with
// the body of its first request: two freezes of one event can share a batch
// (a rescued delivery beside the stuck one, as for reads: execEventReads),
// and the statement updates the row once and returns one row, whose body —
// the one the event now holds — every request of the event gets, each its
// own copy.
func freezeStmt(ws []*deliveryWrite) batchedStmt {
	ids, bodies := make([]string, 0, len(ws)), make([][]byte, 0, len(ws))
	byID := make(map[string][]*freezeRequest, len(ws))
	for _, w := range ws {
		f := w.freeze
		if byID[f.id] == nil {
			ids, bodies = append(ids, f.id), append(bodies, f.body)
		}
		byID[f.id] = append(byID[f.id], f)
	}
	return batchedStmt{sql: freezeBatchSQL, args: []any{ids, bodies}, each: func(rows pgx.Rows) error {
		var id string
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		for i, f := range byID[id] {
			if i == 0 {
				f.out = body
			} else {
				f.out = bytes.Clone(body)
			}
		}
		return nil
	}}
}

func recordStmt(ws []*deliveryWrite) batchedStmt {
	n := len(ws)
	ids, urls, statuses, senders := make([]string, n), make([]string, n), make([]string, n), make([]*string, n)
	codes, started, latencies, errs := make([]*int32, n), make([]time.Time, n), make([]int64, n), make([]*string, n)
	for i, w := range ws {
		d := w.record
		w.status = ""
		ids[i], urls[i], started[i], latencies[i], statuses[i] = d.EventID, d.URL, d.StartedAt, d.Latency.Milliseconds(), d.Status
		if d.StatusCode != 0 {
			c := int32(d.StatusCode)
			codes[i] = &c
		}
		if d.Error != "" {
			e := d.Error
			errs[i] = &e
		}
		if d.Sender != "" {
			t := d.Sender
			senders[i] = &t
		}
	}
	return batchedStmt{sql: recordSQL, args: []any{ids, urls, started, latencies, codes, errs, statuses, senders},
		each: func(rows pgx.Rows) error {
			var n int64 // the try's place in ws, from 1
			var status string
			if err := rows.Scan(&n, &status); err != nil {
				return err
			}
			if n < 1 || n > int64(len(ws)) {
				return fmt.Errorf("record delivery: the statement returned try %d of %d", n, len(ws))
			}
			ws[n-1].status = status
			return nil
		}}
}

// deliveryAloneTimeout bounds each write run again alone after its batch
// failed (writeDeliveryAlone), within the batch's own bound (execTimeout): a
// write held up by something other than a row lock (which batchLockWait
// bounds) costs the writes after it this much at most, not the rest of the
// batch's time. It is the time a delivery waits for its write
// (webhook.recordTimeout): a write that takes longer is one its caller has
// given up on.
const deliveryAloneTimeout = 5 * time.Second

// writeDeliveryAlone runs one write in a transaction of its own: the batch's
// statement with one write, with the batch's settings (queryBatched), so an
// event row another transaction holds fails it after lockWait
// (lock_not_available: batchLockWait in its batch, where the writes after it
// wait for it; aloneLockWait when its caller runs it, writeDelivery), not
// after the batch's whole time, which the writes after it would then lack;
// and on a context of its own, bounded by deliveryAloneTimeout.
func (s *Store) writeDeliveryAlone(ctx context.Context, w *deliveryWrite, lockWait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, deliveryAloneTimeout)
	defer cancel()
	if f := w.freeze; f != nil {
		stmt := freezeStmt([]*deliveryWrite{w})
		err := retryRolledBack(func() error {
			f.out = nil
			return s.queryBatched(ctx, lockWait, stmt)
		})
		if err != nil {
			f.out = nil
			return fmt.Errorf("freeze event body: %w", err)
		}
		s.committed("delivery", 1) // before its caller is told; a batch of one, as a claim's or a win's alone
		if f.out == nil {
			return ErrNotFound
		}
		return nil
	}
	// The batch's statement with one try: one rule for the event's status
	// and the try's number however the record runs.
	rec := recordStmt([]*deliveryWrite{w})
	if err := retryRolledBack(func() error { return s.queryBatched(ctx, lockWait, rec) }); err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	s.committed("delivery", 1)
	return nil
}
