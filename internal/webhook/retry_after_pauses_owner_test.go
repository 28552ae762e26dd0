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

	"github.com/routerhq/router/internal/webhook"
)

// docs/api.md: "to pause deliveries, answer 503 (with Retry-After)". A 503 or
// 429 with Retry-After is the endpoint saying "send me nothing before then".
// It was applied only to the event whose try got it: the owner's next event
// was sent at once, to the endpoint that had just asked for an hour's pause
// (and so was every other event of the owner, each getting its own 503/429).
// Now the owner's other deliveries on this replica are snoozed until the
// pause ends (no try recorded), other owners are not held, and once the pause
// has passed the owner's events are sent again.
func TestRetryAfterPausesTheOwnersOtherDeliveries(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable) // overloaded / maintenance: pause for an hour
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL + "/hook", "globex": srv.URL + "/other"}); err != nil {
		t.Fatal(err)
	}
	first := e.events(t, "acme", e.cancel(t, "acme", "k1").ID)[0].ID
	secondJob := e.cancel(t, "acme", "k2")
	second := e.events(t, "acme", secondJob.ID)[0].ID
	others := e.events(t, "globex", e.cancel(t, "globex", "k3").ID)[0].ID

	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Now: clock,
		Secrets: map[string]string{"acme": secret, "globex": secret}})
	work := func(id, owner string, riverID int64) error {
		return w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: riverID, Attempt: 1, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id, Owner: owner}})
	}
	if err := work(first, "acme", 1); err == nil {
		t.Fatal("the 503 try succeeded")
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("first event: %d requests, want 1", n)
	}
	err := work(second, "acme", 2) // the owner's endpoint asked for a pause of an hour a moment ago
	if n := requests.Load(); n != 1 {
		t.Fatalf("the endpoint answered 503 with Retry-After: 3600, yet the owner's next event was sent to it at once (%d requests): "+
			"Retry-After holds back only the event that got it", n)
	}
	var snoozed *river.JobSnoozeError
	if !errors.As(err, &snoozed) || snoozed.Duration < time.Hour-time.Minute {
		t.Fatalf("the held delivery returned %v, want a snooze of about an hour (the pause)", err)
	}
	if ev := e.events(t, "acme", secondJob.ID)[0]; ev.Tries != 0 || len(ev.Deliveries) != 0 {
		t.Fatalf("the held delivery recorded a try (tries %d, %+v): a pause is no try", ev.Tries, ev.Deliveries)
	}

	_ = work(others, "globex", 3) // another owner is not held
	if n := requests.Load(); n != 2 {
		t.Fatalf("another owner's event: %d requests in all, want 2: acme's pause held globex's delivery", n)
	}

	mu.Lock()
	now = now.Add(time.Hour + time.Second) // the pause has passed
	mu.Unlock()
	_ = work(second, "acme", 2)
	if n := requests.Load(); n != 3 {
		t.Fatalf("after the pause the owner's event was not sent (%d requests in all, want 3)", n)
	}
}
