package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// SendClaim asks a delivery's read of its event (ClaimEventForDelivery) to
// claim the event's send lease: the right to send it, on the database clock,
// for For from the read, held by the try whose token is Token. A claim with
// no Token claims nothing.
//
// River runs one job at a time per row, but decides when a try is stuck on
// its leader's clock (its rescuer compares attempted_at, the database's
// now(), with time.Now() minus RescueStuckJobsAfter): a leader whose clock
// runs ahead of the database's, or a worker paused past the rescue, had River
// run a delivery again while its first try was still sending. The lease
// fences the send in the database: a try sends only while it holds it, and
// another try of the event finds it live and waits (SendLease).
type SendClaim struct {
	Token string
	For   time.Duration
}

// SendLease is what a delivery's read found of its event's send lease, on
// the database clock.
type SendLease struct {
	// Held: the read's claim holds the lease; the try may send.
	Held bool
	// Left is, when the claim does not hold the lease, how long another
	// try's lease has left (0: none is live, and the claim still failed: the
	// event's row was locked by a write at that moment, or it is no longer
	// pending).
	Left time.Duration
}

// sendLeaseOf is what claim got of a lease that the try with token holder
// holds, with left to run, after the read's statement.
func sendLeaseOf(claim SendClaim, holder *string, left time.Duration) SendLease {
	if claim.Token != "" && holder != nil && *holder == claim.Token && left > 0 {
		return SendLease{Held: true}
	}
	return SendLease{Left: left}
}

// eventSendLeaseSQL is the claim of the reads' send leases, the CTE c that
// eventsForDeliverySQL joins (its parameters are described there). A claim
// succeeds on a pending event whose lease is free, has run out, or is the
// claiming try's own (a read done again: Worker.readEvent), and sets
// sending_until to now() + the lease and sender to the try's token. Of two
// claims of one event in a batch (a rescued try beside the stuck one) the
// first queued wins; the other sees the winner's token. An event row locked
// by a write (the record or the freeze of another try) is skipped, not
// waited for: that claim fails with no lease to wait for, and its try
// snoozes briefly. The lease is cleared by the record of the try holding it
// (recordSQL), or by its release when the try failed before sending
// (ReleaseSendLease), and only by that try.
const eventSendLeaseSQL = `i AS (
		SELECT DISTINCT ON (id) id, token, lease_us
		FROM unnest($2::uuid[], $3::text[], $4::bigint[]) WITH ORDINALITY AS i(id, token, lease_us, n)
		ORDER BY id, n
	), l AS (
		SELECT l.id FROM job_events l JOIN i ON i.id = l.id
		WHERE l.status = 'pending' AND (l.sending_until IS NULL OR l.sending_until <= now() OR l.sender = i.token)
		FOR UPDATE OF l SKIP LOCKED
	), c AS (
		UPDATE job_events e SET sending_until = now() + i.lease_us * interval '1 microsecond', sender = i.token
		FROM i JOIN l ON l.id = i.id
		WHERE e.id = i.id
		RETURNING e.id, e.sender, e.sending_until
	)`

// ClaimEventForDelivery is EventForDelivery, with the event's send lease
// claimed for the try (SendClaim) in the same statement: the returned
// event's SendLease says whether the try holds it. A read of an event that
// is no longer pending claims nothing.
func (s *Store) ClaimEventForDelivery(ctx context.Context, id string, claim SendClaim) (*Event, *Webhook, *Job, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil, nil, ErrNotFound
	}
	r := &eventRead{id: id, claim: claim}
	if err := s.readEvent(ctx, r); err != nil {
		return nil, nil, nil, err
	}
	return r.ev, r.wh, r.job, nil
}

// releaseSendLeaseSQL frees an event's send lease held by the try whose token
// is $2, and only by it: a lease another try has claimed since (this one's
// ran out) is left alone.
const releaseSendLeaseSQL = `UPDATE job_events SET sending_until = NULL, sender = NULL WHERE id = $1 AND sender = $2`

// ReleaseSendLease frees the send lease on event id that the try with token
// holds, if it still holds it. It is for a try that claimed the lease and
// then failed before its send could start (the freeze of the event's body
// failed, say): the try records nothing, so its record does not free the
// lease (recordSQL), and without the release the event's next try waited for
// the lease to run out, long after the failure. A try whose send may have
// started keeps its lease instead, to fence the send until it expires. A
// lease freed twice, or one the try does not hold, is no error.
func (s *Store) ReleaseSendLease(ctx context.Context, id, token string) error {
	if _, err := uuid.Parse(id); err != nil || token == "" {
		return nil // no such event, or no lease of the try's
	}
	_, err := s.pool.Exec(ctx, releaseSendLeaseSQL, id, token)
	return err
}
