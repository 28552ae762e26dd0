package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// eventRead is a webhook delivery's read of its event (EventForDelivery)
// waiting for its batch: concurrent deliveries' reads go out together, four
// reads for the whole batch (event and webhook, then the job, attempts and
// race events of the events not yet frozen) where each delivery ran four of
// its own.
type eventRead struct {
	id    string
	claim SendClaim // none when its Token is empty
	done  chan struct{}
	ev    *Event
	wh    *Webhook
	job   *Job
	err   error
	// state is the read's readWaiting, readAbandoned (its caller stopped
	// waiting: abandon) or readAnswered (its batch gave it its answer:
	// answer), whichever came first.
	state atomic.Int32
}

const (
	readWaiting int32 = iota
	readAbandoned
	readAnswered
)

// abandon marks r as given up by its caller, unless its batch has answered
// it already; it reports whether it did. An abandoned read claims no send
// lease when its batch is built after it (execEventReads), and a lease its
// batch claimed for it anyway (the batch was under way) is released by the
// batch: nobody else would, and the event's next try, due within a second
// or so, would wait for it to run out (ReleaseSendLease).
func (r *eventRead) abandon() bool {
	return r.state.CompareAndSwap(readWaiting, readAbandoned)
}

// answer hands r its answer, unless its caller has abandoned it: then it
// reports false, and the batch must release the lease r's claim holds, if
// any.
func (r *eventRead) answer() bool {
	return r.state.CompareAndSwap(readWaiting, readAnswered)
}

// eventReadBatchSize is the most reads carried by one batch.
const eventReadBatchSize = 64

// An event's body is built at its first try from the job as read then. The
// outbox trigger (migration 0017) records on a failure's, cancellation's or
// unknown job's event a snapshot of what a later change can alter — the
// job's mutable columns, its attempts and its race events, as of the
// transition — because such a job can change again before the first try (a
// retry, a resolution, a cancellation, a late win). The reads below use it
// whenever it exists (every job.succeeded event has none: a succeeded job
// never changes, so neither the trigger nor the batched win records one, and
// its job is read as it is): the job is read with the snapshot's columns laid
// over it and the snapshot's attempts and race events in place of its own,
// through jsonb_populate_record(set) into the tables' own row types, so the
// same column lists and scans apply and the body is byte for byte the one the
// transition would have had. Not only once the job's version has moved on:
// some changes leave it (a late answer discarded after a cancellation adds a
// race event and its usage). The one field the snapshot cannot hold is the
// idempotency key's expiry, which the transition sets after the trigger has
// run: recordedKeyExpiry derives it. An event written before migration 0017
// has no snapshot and is built from the job as it is at the first try.
//
// The job, its attempts and its race events are three statements run in one
// read-only REPEATABLE READ transaction (beginSnapshotSQL): they see the
// database as of one moment. An event with a snapshot would not need it (the
// snapshot never changes), but a job.succeeded event has none and is read
// from the live tables, where a loser's late answer (its attempt lost with
// its usage, and its "lost" race event, in one transaction) committed between
// two statements each with its own view made a body that never existed: the
// loser still running without usage beside the race event of its discarded
// answer, frozen at the first try into every redelivery.
const (
	// eventAsRecorded: the event (alias e) has a snapshot of the job as its
	// transition left it. It is read whether or not the job (alias j) has
	// moved on: a change that does not move the job's version (a late answer
	// discarded after a cancellation, with its race event and its usage; a
	// loser's usage estimate stored after the win) would otherwise show in
	// the body of an event that was first tried after it.
	eventAsRecorded = `(e.snapshot IS NOT NULL)`

	// The read of the events, which also claims the send lease of each read
	// that asks for one (SendClaim; eventSendLeaseSQL in delivery_lease.go):
	// $1 the events, then one element per claim: $2 the event, $3 the
	// claiming try's token, $4 the lease in microseconds. After the event's
	// columns, its body and its owner's webhook come its age in microseconds
	// on the database clock (Event.Age), the token of the try that holds its
	// lease after the statement (NULL: none), how long that lease has left in
	// microseconds (0 when none is live), the database's now(), and, when the
	// owner's row is a configured webhook marked removed whose window has not
	// ended (Event.RemovedWebhook), when it was removed and until when its
	// place is kept (NULL otherwise).
	eventsForDeliverySQL = `WITH ` + eventSendLeaseSQL + `
	SELECT ` + eventColumns + `, e.body, w.url, w.secret,
		CASE WHEN w.previous_until > now() THEN w.previous_secret END,
		floor(extract(epoch FROM now() - e.created_at) * 1000000)::bigint,
		CASE WHEN c.id IS NOT NULL THEN c.sender ELSE e.sender END,
		greatest(floor(extract(epoch FROM coalesce(c.sending_until, e.sending_until) - now()) * 1000000), 0)::bigint,
		now(),
		CASE WHEN w.removed_configured AND w.url IS NULL AND w.removed_until > now() THEN w.updated_at END,
		CASE WHEN w.removed_configured AND w.url IS NULL AND w.removed_until > now() THEN w.removed_until END
	FROM job_events e LEFT JOIN c ON c.id = e.id LEFT JOIN webhook_owners w ON w.owner = e.owner
	WHERE e.id = ANY($1::uuid[])`
	// The last column says whether the job has moved on from the recorded
	// one (its version is no longer the event's): its key's expiry is then
	// derived (recordedKeyExpiry); else it is the key's, as read.
	//
	// A snapshot recorded before migration 0034 lacks attempt_base, which
	// next_step reads (a gated target is named only when its round never
	// tried it) and the caller's retry moves to the count of attempts: a
	// job that has moved on with its attempt_base past the recorded attempts
	// was retried since, and its round's base, not recorded, is read as 0
	// (every recorded attempt counts as tried, so a gated target is left
	// unnamed rather than named wrongly).
	jobsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + jobColumns + `, false
	FROM job_events e JOIN jobs j ON j.id = e.job_id
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND NOT ` + eventAsRecorded + `
	UNION ALL
	SELECT e.id::text, ` + jobColumns + `, e.job_version <> cur.version
	FROM job_events e JOIN jobs cur ON cur.id = e.job_id,
		LATERAL jsonb_populate_record(cur, e.snapshot->'job' || CASE
			WHEN NOT (e.snapshot->'job' ? 'attempt_base') AND e.job_version <> cur.version
				AND cur.attempt_base >= jsonb_array_length(e.snapshot->'attempts')
			THEN '{"attempt_base": 0}'::jsonb ELSE '{}'::jsonb END) j
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND e.snapshot IS NOT NULL`
	attemptsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + attemptColumns + `
	FROM job_events e JOIN jobs j ON j.id = e.job_id JOIN attempts a ON a.job_id = e.job_id
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND NOT ` + eventAsRecorded + `
	UNION ALL
	SELECT e.id::text, ` + attemptColumns + `
	FROM job_events e JOIN jobs j ON j.id = e.job_id,
		LATERAL jsonb_populate_recordset(NULL::attempts, e.snapshot->'attempts') a
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND ` + eventAsRecorded + `
	ORDER BY 1, 4` // event, seq
	raceEventsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + raceEventColumns + `
	FROM job_events e JOIN jobs j ON j.id = e.job_id JOIN race_events r ON r.job_id = e.job_id
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND NOT ` + eventAsRecorded + `
	UNION ALL
	SELECT e.id::text, ` + raceEventColumns + `
	FROM job_events e JOIN jobs j ON j.id = e.job_id,
		LATERAL jsonb_populate_recordset(NULL::race_events, e.snapshot->'race_events') r
	WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL AND ` + eventAsRecorded + `
	ORDER BY 1, 2` // event, race event id
)

// recordedKeyExpiry is the expiry of the idempotency key of j, a job read as
// an event recorded it, at that event's transition. The transition sets it in
// its own transaction, after the outbox trigger has run (setJobState): to the
// transaction's now() — j's recorded finished_at — plus KeyRetention for a
// terminal state (failed, cancelled), to NULL (never expires) otherwise
// (unknown). Derived, not recorded: were KeyRetention reconfigured between
// the transition and the first try, the body would show the new retention.
func recordedKeyExpiry(j *Job, retention time.Duration) *time.Time {
	if !IsTerminal(j.State) || j.FinishedAt == nil {
		return nil
	}
	// The interval PostgreSQL added is the duration in whole microseconds.
	t := j.FinishedAt.Add(retention.Truncate(time.Microsecond))
	return &t
}

// readEvent queues r for the next batch and waits for it, or for ctx. A
// read whose ctx ends first is abandoned: it claims no send lease, or the
// one its batch claimed is released (abandon), so the caller, told of ctx's
// end, holds no lease it does not know of. If its batch answered it first,
// the answer is returned, lease and all, as though ctx had not ended.
func (s *Store) readEvent(ctx context.Context, r *eventRead) error {
	r.done = make(chan struct{})
	if err := s.eventReads.await(ctx, r, r.done); err != nil {
		if r.abandon() {
			return fmt.Errorf("read webhook event: %w", err)
		}
		<-r.done // answered: done is closed right after
	}
	return r.err
}

// execEventReads runs one batch of reads in one round trip and gives each
// read its own copies of what it asked for.
//
// The round trip holds two transactions, one after the other before its one
// Sync: the read of the events, with the claims of their send leases (a
// write, so it cannot be part of a read-only snapshot), committed on its own;
// then the job, attempts and race events of the events not yet frozen, in one
// read-only REPEATABLE READ transaction (beginSnapshotSQL), so that a body
// shows its job, attempts and race events as of one moment. Both are begun
// explicitly: after a statement of the batch's implicit transaction, a BEGIN
// setting the isolation level fails (it must come before any query), and a
// COMMIT ending that transaction draws a warning. A claim is committed before
// the job is read, so a read that fails after it may leave the try's lease
// held: the worker releases it (Worker.work), as it did a claim whose commit
// raced the failure. A read whose caller stopped waiting (readEvent) claims
// nothing if it was still queued when its batch was built, and its batch
// releases what it claimed if not (releaseAbandonedLeases): that caller,
// gone, can release only what committed before it left. A failure leaves
// the connection outside a transaction or inside a failed one, which the
// pool closes rather than reuses (pgxpool releases only an idle connection).
func (s *Store) execEventReads(ctx context.Context, batch []*eventRead) {
	ids := make([]string, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	var claimIDs, tokens []string
	var leases []int64
	reads := make([]*eventRead, 0, len(batch))
	for _, r := range batch {
		if r.state.Load() == readAbandoned {
			// Its caller stopped waiting while it was queued: it is read
			// for nobody, and its claim would hold a lease nobody releases.
			close(r.done)
			continue
		}
		reads = append(reads, r)
		if !seen[r.id] {
			seen[r.id] = true
			ids = append(ids, r.id)
		}
		if r.claim.Token != "" {
			claimIDs, tokens = append(claimIDs, r.id), append(tokens, r.claim.Token)
			leases = append(leases, r.claim.For.Microseconds())
		}
	}
	if len(reads) == 0 {
		return
	}
	s.opt.Observer.Batch("delivery_read", len(ids))
	type found struct {
		ev     *Event
		wh     *Webhook
		job    *Job
		holder *string       // the token of the try holding the event's send lease
		left   time.Duration // how long that lease has left
	}
	byID := make(map[string]*found, len(ids))
	jobOf := func(eventID string) *Job {
		if f := byID[eventID]; f != nil {
			return f.job
		}
		return nil
	}
	err := func() error {
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		if len(claimIDs) > 0 {
			// The claims make the events' transaction a write, whose commit
			// would wait for a WAL flush. A send lease lost in a database
			// crash costs nothing a crash does not already cost: it is
			// bookkeeping, as the leases execLazy takes are.
			b.Queue(lazyCommitSQL)
		}
		b.Queue(eventsForDeliverySQL, ids, claimIDs, tokens, leases)
		b.Queue(commitSQL)
		b.Queue(beginSnapshotSQL)
		b.Queue(jobsOfUnfrozenEventsSQL, ids)
		b.Queue(attemptsOfUnfrozenEventsSQL, ids)
		b.Queue(raceEventsOfUnfrozenEventsSQL, ids)
		b.Queue(commitSQL)
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		// exec runs the next n statements that return no rows.
		exec := func(n int) error {
			for range n {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			return nil
		}
		begin := 1
		if len(claimIDs) > 0 {
			begin++
		}
		if err := exec(begin); err != nil {
			return err
		}
		err := readRows(br, func(rows pgx.Rows) error {
			var body []byte
			var url, secret, previous *string
			var ageMicros, leftMicros int64
			var holder *string
			var now time.Time
			var removedAt, removedUntil *time.Time
			e, err := scanEvent(rows, &body, &url, &secret, &previous, &ageMicros, &holder, &leftMicros, &now, &removedAt, &removedUntil)
			if err != nil {
				return err
			}
			e.Body, e.Age, e.DBNow = body, time.Duration(ageMicros)*time.Microsecond, now
			if removedAt != nil && removedUntil != nil {
				e.RemovedWebhook = &WebhookRemoval{At: *removedAt, Until: *removedUntil}
			}
			f := &found{ev: e, holder: holder, left: time.Duration(leftMicros) * time.Microsecond}
			if url != nil {
				f.wh = &Webhook{URL: *url}
				if secret != nil {
					f.wh.Secret = *secret
				}
				if previous != nil {
					f.wh.PreviousSecret = *previous
				}
			}
			byID[e.ID] = f
			return nil
		})
		if err != nil {
			return err
		}
		// The events' COMMIT, then the snapshot's BEGIN.
		if err := exec(2); err != nil {
			return err
		}
		if err := readRows(br, func(rows pgx.Rows) error {
			var id string
			j := &Job{Attempts: []Attempt{}, RaceEvents: []RaceEvent{}}
			var recorded bool
			if err := rows.Scan(append(append([]any{&id}, j.dest()...), &recorded)...); err != nil {
				return err
			}
			if recorded {
				// As the transition left it, the job held its key.
				j.KeyExpiresAt, j.KeyTaken = recordedKeyExpiry(j, s.opt.KeyRetention), false
			}
			if f := byID[id]; f != nil {
				f.job = j
			}
			return nil
		}); err != nil {
			return err
		}
		if err := readRows(br, func(rows pgx.Rows) error {
			var id string
			var a Attempt
			if err := rows.Scan(append([]any{&id}, a.dest()...)...); err != nil {
				return err
			}
			if j := jobOf(id); j != nil {
				j.Attempts = append(j.Attempts, a)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := readRows(br, func(rows pgx.Rows) error {
			var id string
			var e RaceEvent
			if err := rows.Scan(append([]any{&id}, e.dest()...)...); err != nil {
				return err
			}
			if j := jobOf(id); j != nil {
				j.RaceEvents = append(j.RaceEvents, e)
			}
			return nil
		}); err != nil {
			return err
		}
		return exec(1) // the snapshot's COMMIT
	}()
	for _, f := range byID {
		if f.job != nil {
			f.job.sumCosts()
		}
	}
	// Each read gets its own copies: two reads of one event in a batch (a
	// rescued delivery beside the stuck one) must not share what they may change.
	var release []*eventRead
	for _, r := range reads {
		f := byID[r.id]
		switch {
		case err != nil:
			r.err = fmt.Errorf("read webhook events: %w", err)
		case f == nil:
			r.err = ErrNotFound
		default:
			ev := *f.ev
			ev.SendLease = sendLeaseOf(r.claim, f.holder, f.left)
			r.ev, r.wh = &ev, f.wh
			if f.job != nil {
				j := *f.job
				j.Attempts, j.RaceEvents = append([]Attempt{}, f.job.Attempts...), append([]RaceEvent{}, f.job.RaceEvents...)
				r.job = &j
			}
		}
		if !r.answer() && r.claim.Token != "" && (err != nil || r.ev != nil && r.ev.SendLease.Held) {
			// Its caller stopped waiting while the batch ran: the claim
			// holds the lease (or, the batch having failed, may: its
			// commit comes before the job's read) for nobody.
			release = append(release, r)
		}
		close(r.done)
	}
	s.releaseAbandonedLeases(ctx, release)
}

// releaseAbandonedLeases frees the send leases that rs's claims took after
// their callers had stopped waiting (abandon): the callers, told their read
// failed, released nothing they knew of, and the event's next try would
// wait for the lease to run out. A release that fails leaves the lease to
// run out, as before; it is logged.
func (s *Store) releaseAbandonedLeases(ctx context.Context, rs []*eventRead) {
	for _, r := range rs {
		if _, err := s.pool.Exec(ctx, releaseSendLeaseSQL, r.id, r.claim.Token); err != nil {
			s.opt.Log.Warn("release the send lease of a webhook delivery's read whose caller stopped waiting; "+
				"the event's next try waits for it to run out", slog.String("event_id", r.id), slog.Any("error", err))
		}
	}
}
