package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// failingFreeze is the real store whose freeze of an event's body fails
// while fail is set, as a reset connection would; with cancel set, the
// freeze cancels the try's context first (a try cut short by the shutdown
// while it freezes) and fails with it.
type failingFreeze struct {
	*store.Store
	fail   atomic.Bool
	cancel context.CancelFunc
}

func (s *failingFreeze) FreezeEventBody(ctx context.Context, id string, body []byte) ([]byte, error) {
	if !s.fail.Load() {
		return s.Store.FreezeEventBody(ctx, id, body)
	}
	if s.cancel != nil {
		s.cancel()
		return nil, ctx.Err()
	}
	return nil, errors.New("conn reset")
}

// claimThenFail is the real store whose reads of events claim the send
// lease and then fail while fail is set, as a read whose claim committed
// before its connection broke.
type claimThenFail struct {
	*store.Store
	fail atomic.Bool
}

func (s *claimThenFail) ClaimEventForDelivery(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	ev, wh, j, err := s.Store.ClaimEventForDelivery(ctx, id, claim)
	if err == nil && s.fail.Load() {
		return nil, nil, nil, errors.New("conn reset")
	}
	return ev, wh, j, err
}

// A try that claimed its event's send lease and then failed before sending
// (the freeze of the event's body or the read failed, a try cut short while
// freezing) releases the lease: River's retry of it sends at once. It used
// to leave the lease held, and the retry snoozed until the lease ran out
// (webhooks.timeout and 20 s more) for nothing.
func TestATryThatFailsBeforeSendingReleasesItsLease(t *testing.T) {
	for _, c := range []struct {
		name  string
		store func(st *store.Store, cancel context.CancelFunc) (webhook.Store, func(bool))
	}{
		{"freeze", func(st *store.Store, _ context.CancelFunc) (webhook.Store, func(bool)) {
			f := &failingFreeze{Store: st}
			return f, f.fail.Store
		}},
		{"freeze cut short", func(st *store.Store, cancel context.CancelFunc) (webhook.Store, func(bool)) {
			f := &failingFreeze{Store: st, cancel: cancel}
			return f, f.fail.Store
		}},
		{"read", func(st *store.Store, _ context.CancelFunc) (webhook.Store, func(bool)) {
			f := &claimThenFail{Store: st}
			return f, f.fail.Store
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				requests.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(srv.Close)
			e := setup(t, srv.URL, 5*time.Second)
			j := e.cancel(t, "acme", "k1")
			id := e.events(t, "acme", j.ID)[0].ID
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, fail := c.store(e.st, cancel)
			w := webhook.NewWorker(st, webhook.Config{Secrets: map[string]string{"acme": secret}})
			job := func(attempt int) *river.Job[webhook.DeliverArgs] {
				return &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000},
					Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}
			}

			fail(true)
			if err := w.Work(ctx, job(1)); err == nil {
				t.Fatal("the first try returned no error, want its failure")
			}
			var free bool
			if err := e.db.Pool.QueryRow(context.Background(), `SELECT sending_until IS NULL AND sender IS NULL FROM job_events WHERE id = $1`, id).Scan(&free); err != nil || !free {
				t.Errorf("the lease after the failed try: free %v, %v; want released", free, err)
			}

			fail(false)
			err := w.Work(context.Background(), job(2))
			if snooze := (*rivertype.JobSnoozeError)(nil); errors.As(err, &snooze) {
				t.Fatalf("the retry snoozed %s: the failed try left its send lease held", snooze.Duration)
			}
			if err != nil {
				t.Fatalf("the retry: %v", err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("the receiver got %d requests, want 1", n)
			}
			if ev := e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1); ev.Tries != 1 {
				t.Errorf("tries %d, want 1", ev.Tries)
			}
		})
	}
}
