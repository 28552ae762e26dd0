package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// lostRecordStore loses the record of the first try (the write timed out in a
// database stall: webhook.recordTimeout), as a slow database does.
type lostRecordStore struct {
	webhook.Store
	lost atomic.Bool
}

func (s *lostRecordStore) RecordDelivery(ctx context.Context, d store.DeliveryTry) (string, error) {
	if s.lost.CompareAndSwap(false, true) {
		return "", errors.New("webhook delivery write: context deadline exceeded")
	}
	return s.Store.RecordDelivery(ctx, d)
}

// docs/api.md: idempotency-key is "the event id and this try's number …;
// another on each redelivery" — so that an idempotency layer at the receiver
// (Stripe-style, IETF Idempotency-Key draft: the first answer to a key is
// stored and replayed) does not answer a redelivery with an earlier try's
// stored failure. The try's number is the count of recorded tries plus one
// (ev.Tries+1), so a try whose record was lost (a database stall past
// recordTimeout; River retries the delivery once its send lease has run out)
// is followed by a redelivery with the same key: the receiver's middleware
// replays the stored 500 of the first try, the handler is not reached, and
// the redelivery is recorded as the endpoint's failure, one more backoff
// wait for an endpoint that had recovered.
func TestRedeliveryAfterALostRecordHasANewIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	stored := map[string]int{}
	handled := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		if code, ok := stored[key]; ok {
			w.WriteHeader(code) // the middleware replays the stored answer
			return
		}
		handled++
		code := http.StatusNoContent
		if handled == 1 {
			code = http.StatusInternalServerError // the handler's first run fails
		}
		stored[key] = code
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	st := &lostRecordStore{Store: e.st}
	w := webhook.NewWorker(st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	work := func(attempt int) error {
		return w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}})
	}
	if err := work(1); err == nil {
		t.Fatal("the first try (answered 500, its record lost) returned no error")
	}
	// River retries once the unrecorded try's send lease has run out
	// (webhooks.timeout + 20 s): here the lease is ended at once.
	if _, err := e.db.Pool.Exec(ctx, `UPDATE job_events SET sending_until = now() WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	_ = work(2)
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 {
		t.Fatalf("%d requests, want 2", len(keys))
	}
	// The try's number stays readable: the lost try was not counted, so
	// the redelivery is try 1 again, with a key of its own.
	if !tryKey(id, 1).MatchString(keys[0]) || !tryKey(id, 1).MatchString(keys[1]) {
		t.Fatalf("Idempotency-Keys %q, want %s.1.<8 hex> on both", keys, id)
	}
	if keys[0] == keys[1] {
		ev := e.events(t, "acme", j.ID)[0]
		t.Fatalf("the redelivery after a try whose record was lost carried that try's Idempotency-Key %q: the receiver's "+
			"idempotency layer answered it with the stored 500 (handler reached %d time(s); event %s after %d recorded tries)",
			keys[1], handled, ev.Status, ev.Tries)
	}
}
