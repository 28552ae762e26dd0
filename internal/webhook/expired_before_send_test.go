package webhook_test

import (
	"context"
	"io"
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

// slowReadStore is the real store whose event read completes only after the
// delivery job's context has run out — as store.group's batched read does
// when the worker's goroutine leads the batch itself (it runs the batch on
// its own goroutine with a 30 s bound of its own, ignoring the caller's
// context, which River set to webhooks.timeout + 10 s) and await's select
// then finds both the read done and the context done.
type slowReadStore struct {
	*store.Store
	expire context.CancelFunc // runs the job's context out
}

func (s slowReadStore) ClaimEventForDelivery(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	ev, wh, j, err := s.Store.ClaimEventForDelivery(context.WithoutCancel(ctx), id, claim)
	s.expire()
	return ev, wh, j, err
}

func (s slowReadStore) FreezeEventBody(ctx context.Context, id string, body []byte) ([]byte, error) {
	return s.Store.FreezeEventBody(context.WithoutCancel(ctx), id, body)
}

// A try whose job context ran out before it sent anything was recorded as the
// endpoint's failure, "no answer within 5s", though no request was made: the
// endpoint is blamed (router_webhook_deliveries_total{outcome="failed"}, the
// dashboard's failing list, the tenant's GET /v1/jobs/{id}/events), and an
// event that is webhooks.retry_for old is abandoned with that false reason.
// Now it records no try and releases its send lease, and the retry delivers.
func TestATryThatNeverSentIsNotRecordedAsNoAnswer(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	ctx, expire := context.WithCancelCause(context.Background())
	st := slowReadStore{Store: e.st, expire: func() { expire(context.DeadlineExceeded) }}
	w := webhook.NewWorker(st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	_ = w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}})

	ev := e.events(t, "acme", j.ID)[0]
	if n := requests.Load(); n == 0 && len(ev.Deliveries) > 0 && ev.Deliveries[0].Error != nil &&
		*ev.Deliveries[0].Error == "no answer within 5s" {
		t.Fatalf("no request was sent (%d), yet the try is recorded as the endpoint's failure: %q (event %s, tries %d)",
			n, *ev.Deliveries[0].Error, ev.Status, ev.Tries)
	}
	if ev.Tries != 0 || len(ev.Deliveries) != 0 {
		t.Fatalf("a try that sent nothing is recorded: tries %d, %+v", ev.Tries, ev.Deliveries)
	}

	// Its send lease was released: the retry sends at once rather than
	// snoozing until the lease runs out.
	if err := w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 2, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if ev := e.events(t, "acme", j.ID)[0]; requests.Load() != 1 || ev.Status != store.EventDelivered || ev.Tries != 1 {
		t.Fatalf("the retry: %d requests, event %s after %d tries; want it delivered by its first try", requests.Load(), ev.Status, ev.Tries)
	}
}
