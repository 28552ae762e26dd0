package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// betweenStatements is the real store whose first ClaimEventForDelivery of an
// event without a stored body has something committed between the read's
// first statement (the event, no body yet) and its second (the jobs of events
// without a body), which then finds no job: what runs in between (meanwhile)
// is another try of the event freezing its body, or retention deleting the
// job with its events.
type betweenStatements struct {
	*store.Store
	meanwhile func(ev *store.Event, j *store.Job)
	reads     int
}

func (s *betweenStatements) ClaimEventForDelivery(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	ev, wh, j, err := s.Store.ClaimEventForDelivery(ctx, id, claim)
	if s.reads++; s.reads > 1 || err != nil || ev.Body != nil || j == nil {
		return ev, wh, j, err
	}
	s.meanwhile(ev, j)
	return ev, wh, nil, nil
}

// work runs one delivery try of event id with st, as River would, and
// returns what the worker did.
func work(st webhook.Store, id string) error {
	w := webhook.NewWorker(st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	return w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id}})
}

// A body another try of the event freezes while this try reads the event
// leaves this read with neither a body nor a job, as a deleted job would. The
// try reads the event again and sends the frozen body: it used to take the
// event for deleted and complete its River job, leaving the event pending with
// nothing to deliver it, for good.
func TestBodyFrozenDuringTheReadIsDelivered(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	var frozen []byte
	st := &betweenStatements{Store: e.st, meanwhile: func(ev *store.Event, j *store.Job) {
		var err error
		if frozen, err = e.st.FreezeEventBody(context.Background(), ev.ID, []byte(wantBody(ev.Type, j))); err != nil {
			t.Fatal(err)
		}
	}}
	if err := work(st, e.events(t, "acme", j.ID)[0].ID); err != nil {
		t.Fatalf("the try returned %v, want nil (delivered)", err)
	}
	select {
	case r := <-rc.got:
		verified(t, r)
		if string(r.body) != string(frozen) {
			t.Fatalf("the try sent %s, want the body the other try froze: %s", r.body, frozen)
		}
	default:
		t.Fatal("the try sent nothing: it took the event for deleted, and the event stays pending with no River job to deliver it")
	}
	e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1)
}

// A job retention deletes while its event is read takes the event with it:
// the read again finds nothing, and the try ends without sending or
// recording anything (River completes its job).
func TestJobDeletedDuringTheReadEndsTheTry(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID
	st := &betweenStatements{Store: e.st, meanwhile: func(ev *store.Event, j *store.Job) {
		// As retention deletes a job (store.DeleteExpiredJobs): its rows and
		// its events, in one transaction.
		err := pgx.BeginFunc(context.Background(), e.db.Pool, func(tx pgx.Tx) error {
			for _, table := range []string{"race_events", "attempts", "job_events", "idempotency_keys", "released_keys"} {
				if _, err := tx.Exec(context.Background(), `DELETE FROM `+table+` WHERE job_id = $1`, j.ID); err != nil {
					return err
				}
			}
			_, err := tx.Exec(context.Background(), `DELETE FROM jobs WHERE id = $1`, j.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}}
	if err := work(st, id); err != nil {
		t.Fatalf("the try of an event deleted with its job returned %v, want nil (nothing left to deliver)", err)
	}
	select {
	case r := <-rc.got:
		t.Fatalf("the try of an event deleted with its job sent %s", r.body)
	default:
	}
}
