package webhook

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/riverqueue/river"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// heldWhy ends the error of an event abandoned while its owner's pause held
// it (abandonHeld); tell logs such an abandonment by it.
const heldWhy = "and the owner's webhook asked for a pause (Retry-After on a 429 or 503) that outlasted it; nothing was sent"

// busyWhy ends the error of an event abandoned while it waited for one of
// its owner's slots (abandonBusy); tell logs such an abandonment by it.
const busyWhy = "and its last retry's time had passed while it still waited for a free slot of its owner " +
	"(webhooks.max_inflight_per_owner of the owner's deliveries were in flight on the replica, or only the reserve for other owners was left); " +
	"nothing was sent; raise webhooks.max_inflight_per_owner, or make the endpoint answer faster"

// ownerBusyGrace is how long past the latest its last retry can come due
// (lastLook) a delivery still waits for its owner's turn: the longest wait
// acquire gives.
const ownerBusyGrace = 2 * ownerBusyMax

// lastLook is how old an event may be when a delivery of it that waits its
// owner's turn (its owner at its limit, or paused) is still snoozed: the
// latest its last retry can come due — a try failed just under
// webhooks.retry_for old, lasting up to config.DeliveryTryMax (its job's
// timeout, Timeout, then its record, recordTimeout; counted as
// webhooks.timeout alone, the try took 15 s of ownerBusyGrace), then waited
// up to webhooks.backoff_cap and the Retry-After spread — plus ownerBusyGrace
// (a sum that saturates). No snooze of such a delivery ends later than that
// (capWait), and one looked at after it is abandoned unsent (abandonBusy,
// abandonHeld): retention keeps the job of a pending event only for the
// redelivery window (config.Webhooks.RedeliveryWindow, which allows for this
// and for River's rescue of a try killed then: config.RedeliveryMargin), and
// a turn parked past it, or a due retry that waited a while for one, found
// nothing: the event was never delivered nor abandoned (found by review).
func (w *Worker) lastLook() time.Duration {
	d := time.Duration(0)
	for _, x := range []time.Duration{w.cfg.RetryFor, w.backoff.Cap, spreadMax(w.backoff.Cap), config.DeliveryTryMax(w.cfg.Timeout), ownerBusyGrace} {
		if d > math.MaxInt64-x {
			return math.MaxInt64
		}
		d += x
	}
	return d
}

// jobAge is the age of job's event on the database clock as this process
// last measured it, from its River job's creation (the outbox inserts both
// in one statement, on the database clock); ok is false for a job without
// its creation time (River always gives it).
func (w *Worker) jobAge(job *river.Job[DeliverArgs]) (age time.Duration, ok bool) {
	if job.JobRow == nil || job.CreatedAt.IsZero() {
		return 0, false
	}
	return w.backoff.now().Add(w.hints.offset()).Sub(job.CreatedAt), true
}

// capWait is wait, a snooze of a delivery that waits its owner's turn, ended
// no later than its event is lastLook old (age: its age now, on the database
// clock). A turn far ahead (a parked backlog's) thus ends early for an event
// that old: it is then tried if a slot is free, or abandoned.
func (w *Worker) capWait(age, wait time.Duration) time.Duration {
	return max(0, min(wait, w.lastLook()-age))
}

// snoozeTurn snoozes job, which waits its owner's turn, for wait (capWait).
func (w *Worker) snoozeTurn(job *river.Job[DeliverArgs], wait time.Duration) error {
	if age, ok := w.jobAge(job); ok {
		wait = w.capWait(age, wait)
	}
	return w.snooze(wait)
}

// heldPastRetryFor says whether a delivery held by its owner's pause may be
// webhooks.retry_for old, so that abandonHeld reads it. Only a failed try
// abandoned an event, and a held delivery is none: behind an endpoint that
// answers every try 503 with Retry-After the owner got about one try per
// pause in all, the others held again after it, and its events were never
// abandoned, nor counted, until retention deleted them still pending. The
// River job's creation is the event's (jobAge), compared with the database's
// time as this process last measured it: a held delivery costs no read until
// then. A job without its creation time is read.
func (w *Worker) heldPastRetryFor(job *river.Job[DeliverArgs]) bool {
	age, ok := w.jobAge(job)
	return !ok || age >= w.cfg.RetryFor
}

// busyPastLastLook says whether a delivery that found no free slot of its
// owner may be lastLook old, so that abandonBusy reads it. Unlike a held one,
// a job without its creation time (River always gives it) is snoozed
// unread: a delivery over its owner's limit costs no read (Work).
func (w *Worker) busyPastLastLook(job *river.Job[DeliverArgs]) bool {
	age, ok := w.jobAge(job)
	return ok && age >= w.lastLook()
}

// abandonHeld abandons a held delivery's event that is webhooks.retry_for old
// by its age as the database measures it, as a failed try would have, with
// nothing sent (abandonWaiting). An event younger than that, or being sent,
// is snoozed for hold's wait, its turn after the pause (capWait).
func (w *Worker) abandonHeld(ctx context.Context, job *river.Job[DeliverArgs], hold func() time.Duration) error {
	return w.abandonWaiting(ctx, job, w.cfg.RetryFor, heldWhy, hold)
}

// abandonBusy abandons the event of a delivery that found no free slot of its
// owner when the event is lastLook old by the database's measure, nothing
// sent (abandonWaiting): a retry that came due in time has waited
// ownerBusyGrace for a slot. An event younger than that, or being sent, is
// snoozed for wait, its turn (capWait). The wait was a turn given to the
// delivery (ownerSlots.snooze): an abandoned delivery gives it back.
func (w *Worker) abandonBusy(ctx context.Context, job *river.Job[DeliverArgs], wait time.Duration) error {
	err := w.abandonWaiting(ctx, job, w.lastLook(), busyWhy, func() time.Duration { return wait })
	var snoozed *river.JobSnoozeError
	if !errors.As(err, &snoozed) && job.JobRow != nil {
		w.owners.back(job.ID)
	}
	return err
}

// abandonWaiting abandons the event of a delivery that waits its owner's
// turn when the event is due old by its age as the database measures it, as
// a failed try would have, with nothing sent: the try recorded says why (its
// error ends with why), and is logged and counted abandoned. It claims the
// event's send lease first, so that it ends no event another try of it is
// sending (a rescued job beside the stuck one). An event younger than that
// is snoozed for wait's wait (capWait); one being sent, for that too but at
// least until the other try's send lease ends (leaseBusyWait at least).
func (w *Worker) abandonWaiting(ctx context.Context, job *river.Job[DeliverArgs], due time.Duration, why string, wait func() time.Duration) error {
	claim := store.SendClaim{Token: newSendToken(), For: w.sendLease()}
	ev, wh, _, err := w.store.ClaimEventForDelivery(ctx, job.Args.EventID, claim)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil // deleted by retention
	case err != nil:
		w.releaseLease(ctx, job.Args.EventID, claim)
		return fmt.Errorf("read event: %w", err)
	}
	w.hints.noteClock(ev.DBNow, w.backoff.now())
	switch {
	case ev.Status != store.EventPending:
		return nil
	case !ev.SendLease.Held:
		// Another try of the event is sending it: nothing is decided before
		// its lease ends, as in Work. capWait alone is no wait for an event
		// lastLook old, and a snooze of 0 made the job available again at
		// once, to claim the held lease again and again until it ended.
		return w.snooze(max(w.capWait(ev.Age, wait()), ev.SendLease.Left, leaseBusyWait))
	case ev.Age < due:
		w.releaseLease(ctx, ev.ID, claim)
		return w.snooze(w.capWait(ev.Age, wait()))
	}
	try := store.DeliveryTry{EventID: ev.ID, Try: ev.Tries + 1, StartedAt: newTryClock(ev.DBNow, w.cfg.Now).now(),
		Sender: claim.Token, Status: store.EventAbandoned,
		Error: fmt.Sprintf("abandoned: the event is older than webhooks.retry_for (%s) %s", w.cfg.RetryFor, why)}
	if wh != nil {
		try.URL = wh.URL
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	status, err := w.store.RecordDelivery(rctx, try)
	cancel()
	if err != nil {
		// Nothing was sent, so the lease fences no send (a try that sent
		// keeps it): give it back, or the next look finds it held and is
		// snoozed for the whole wait before it can abandon the event.
		w.releaseLease(ctx, ev.ID, claim)
		return fmt.Errorf("record delivery: %w", err)
	}
	w.tell(ev, job, try, status, false)
	if status == store.EventAbandoned {
		return river.JobCancel(errors.New(try.Error))
	}
	return nil // another try of it delivered it first
}
