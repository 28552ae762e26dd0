package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/routerhq/router/internal/store"
)

// heldWhy ends the error of an event abandoned while its owner's pause held
// it (abandonHeld); tell logs such an abandonment by it.
const heldWhy = "and the owner's webhook asked for a pause (Retry-After on a 429 or 503) that outlasted it; nothing was sent"

// heldPastRetryFor says whether a delivery held by its owner's pause may be
// webhooks.retry_for old, so that abandonHeld reads it. Only a failed try
// abandoned an event, and a held delivery is none: behind an endpoint that
// answers every try 503 with Retry-After the owner got about one try per
// pause in all, the others held again after it, and its events were never
// abandoned, nor counted, until retention deleted them still pending. The
// River job's creation is the event's (the outbox inserts both in one
// transaction, on the database clock), compared with the database's time as
// this process last measured it: a held delivery costs no read until then.
// A job without its creation time (River always gives it) is read.
func (w *Worker) heldPastRetryFor(job *river.Job[DeliverArgs]) bool {
	if job.JobRow == nil || job.CreatedAt.IsZero() {
		return true
	}
	return w.backoff.now().Add(w.hints.offset()).Sub(job.CreatedAt) >= w.cfg.RetryFor
}

// abandonHeld abandons a held delivery's event that is webhooks.retry_for old
// by its age as the database measures it, as a failed try would have, with
// nothing sent: the try recorded says why, and is logged and counted
// abandoned. It claims the event's send lease first, so that it ends no event
// another try of it is sending (a rescued job beside the stuck one). An
// event younger than that, or being sent, is snoozed for hold's wait, its
// turn after the pause.
func (w *Worker) abandonHeld(ctx context.Context, job *river.Job[DeliverArgs], hold func() time.Duration) error {
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
		return w.snooze(hold())
	case ev.Age < w.cfg.RetryFor:
		w.releaseLease(ctx, ev.ID, claim)
		return w.snooze(hold())
	}
	try := store.DeliveryTry{EventID: ev.ID, Try: ev.Tries + 1, StartedAt: newTryClock(ev.DBNow, w.cfg.Now).now(),
		Sender: claim.Token, Status: store.EventAbandoned,
		Error: fmt.Sprintf("abandoned: the event is older than webhooks.retry_for (%s) %s", w.cfg.RetryFor, heldWhy)}
	if wh != nil {
		try.URL = wh.URL
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	status, err := w.store.RecordDelivery(rctx, try)
	cancel()
	if err != nil {
		// Nothing was sent, so the lease fences no send (a try that sent
		// keeps it): give it back, or the next look finds it held and is
		// snoozed for the whole pause before it can abandon the event.
		w.releaseLease(ctx, ev.ID, claim)
		return fmt.Errorf("record delivery: %w", err)
	}
	w.tell(ev, job, try, status, false)
	if status == store.EventAbandoned {
		return river.JobCancel(errors.New(try.Error))
	}
	return nil // another try of it delivered it first
}
