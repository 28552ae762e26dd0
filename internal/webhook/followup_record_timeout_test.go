package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// stallingRecords is the real store whose RecordDelivery stalls, as a write
// stuck behind a lock or an exhausted pool would, until its context ends; then
// the real store does the write with that context (it may still carry it out:
// a batch it joined runs whether or not its caller waits). Before stalling it
// ends the try's own context (cancelTry), as the shutdown may while the record
// is on its way.
type stallingRecords struct {
	*store.Store
	t         *testing.T
	cancelTry context.CancelFunc
	deadline  chan time.Time // the record's deadline, once it is called
	ended     chan error     // why the record's context ended
}

func (s *stallingRecords) RecordDelivery(ctx context.Context, d store.DeliveryTry) (string, error) {
	s.cancelTry()
	if err := ctx.Err(); err != nil {
		s.t.Errorf("the record of the try ended with the try's own context (%v): a try cut short by the shutdown would go unrecorded", err)
	}
	dl, ok := ctx.Deadline()
	if !ok {
		// Stalling here would hang the worker (and this test) for good.
		s.t.Error("RecordDelivery runs without a time limit: a write stalled past River's RescueStuckJobsAfter lets River deliver the event again while this try still runs")
		close(s.deadline)
		return s.Store.RecordDelivery(ctx, d)
	}
	s.deadline <- dl
	<-ctx.Done()
	s.ended <- context.Cause(ctx)
	return s.Store.RecordDelivery(ctx, d)
}

// A try whose record stalls ends when the record's own time limit does, well
// inside River's rescue of stuck jobs, however the try itself ended: the
// worker returns (and River retries the delivery, never runs it twice at
// once), and the record is not cut short by the try's cancellation.
func TestAStalledRecordDoesNotOutliveTheRescue(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	tryCtx, cancelTry := context.WithCancel(context.Background())
	defer cancelTry()
	st := &stallingRecords{Store: e.st, t: t, cancelTry: cancelTry, deadline: make(chan time.Time, 1), ended: make(chan error, 1)}
	w := webhook.NewWorker(st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	started := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- w.Work(tryCtx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id}})
	}()
	verified(t, rc.next(t))

	dl, limited := <-st.deadline
	// River rescues a job running longer than 2 × w.Timeout + 5s (NewService):
	// the record must give up before.
	if limited && !dl.Before(started.Add(2*w.Timeout(nil))) {
		t.Errorf("the record may run until %s after the try started; River may rescue the job from %s",
			dl.Sub(started), 2*w.Timeout(nil)+5*time.Second)
	}
	if limited {
		if cause := <-st.ended; !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("the stalled record ended by %v; want its own time limit (context.DeadlineExceeded)", cause)
		}
	}
	// The worker returns: River now sees the job finished, so it retries the
	// delivery rather than rescuing one still running.
	if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the worker returned %v; want nil (the write went through) or the record's time limit", err)
	}
}
