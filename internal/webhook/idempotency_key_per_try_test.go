package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A receiver behind idempotency middleware (Stripe-style, or the IETF
// Idempotency-Key draft: the first response to a key is stored and replayed
// for every later request with that key) must still get the event once its
// handler recovers. Every try carried the same Idempotency-Key (the event id),
// so the middleware answered each redelivery with the stored 500 of the first
// try: the redeliveries never reached the handler, and the event was abandoned
// after webhooks.retry_for although the receiver was healthy since try 2.
// Now each try has its own key (the event id, the try's number and a part of
// the try's send lease token).
func TestRedeliveryAfterAFailureIsNotAnsweredFromTheReceiversIdempotencyCache(t *testing.T) {
	var mu sync.Mutex
	stored := map[string]int{} // Idempotency-Key -> the status first answered
	handled := 0               // requests that reached the handler
	var keys, ids []string     // each request's Idempotency-Key and webhook-id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		ids = append(ids, r.Header.Get(webhook.HeaderID))
		if code, ok := stored[key]; ok && key != "" {
			w.WriteHeader(code) // the middleware replays the stored response
			return
		}
		handled++
		code := http.StatusNoContent
		if handled == 1 {
			code = http.StatusInternalServerError // the handler's first run fails (a database blip)
		}
		if key != "" {
			stored[key] = code
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	for attempt := 1; attempt <= 3; attempt++ {
		err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id}})
		if err == nil {
			break
		}
	}
	ev := e.events(t, "acme", j.ID)[0]
	mu.Lock()
	n := handled
	mu.Unlock()
	if ev.Status != store.EventDelivered {
		codes := []int{}
		for _, d := range ev.Deliveries {
			if d.StatusCode != nil {
				codes = append(codes, *d.StatusCode)
			}
		}
		t.Fatalf("after %d tries the event is %s (answers %v); the receiver's handler ran %d time(s): every redelivery "+
			"carried the first try's Idempotency-Key and was answered with its stored 500", len(ev.Deliveries), ev.Status, codes, n)
	}
	// Each try has its own key (the event id, the try's number and a part of
	// its send lease's); webhook-id, what receivers deduplicate on, stays the
	// event id.
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || !tryKey(id, 1).MatchString(keys[0]) || !tryKey(id, 2).MatchString(keys[1]) || ids[0] != id || ids[1] != id {
		t.Fatalf("Idempotency-Keys %q and webhook-ids %q, want %s.1.<8 hex> and %s.2.<8 hex>, and %s on both", keys, ids, id, id, id)
	}
}

// tryKey matches the Idempotency-Key of try (1 for the first) of event id:
// "<event id>.<try>.<the first 8 hex digits of the try's send lease token>".
func tryKey(id string, try int) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(id) + `\.` + strconv.Itoa(try) + `\.[0-9a-f]{8}$`)
}
