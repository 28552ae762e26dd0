package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A Retry-After HTTP-date without the answer's Date is measured from the
// database's time, as the retry is then scheduled (Backoff.NextRetry): a
// worker whose clock is three hours ahead took "in one hour" for a date long
// past, and retried at once.
func TestRetryAfterDateIsMeasuredOnTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	var before, after, until time.Time
	var untilUnix atomic.Int64 // until, for the receiver's goroutine
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = nil // no Date: the wait is measured from the sender's now
		w.Header().Set("Retry-After", time.Unix(untilUnix.Load(), 0).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	jobID := cancelledJob(t, db, "acme")
	evs, err := db.Store.JobEvents(ctx, "acme", jobID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	const ahead = 3 * time.Hour
	w := NewWorker(db.Store, Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		Now: func() time.Time { return time.Now().Add(ahead) }})
	w.setBackoff(Backoff{Base: time.Second, Cap: 2 * time.Hour})
	if err := db.Pool.QueryRow(ctx, `SELECT now()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	until = before.Add(time.Hour).Truncate(time.Second).Add(time.Second) // an HTTP-date has whole seconds
	untilUnix.Store(until.Unix())
	err = w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 7, Attempt: 1, MaxAttempts: 10000},
		Args: DeliverArgs{EventID: evs[0].ID, Owner: "acme"}})
	if err == nil {
		t.Fatal("a try answered 503 returned no error")
	}
	if err := db.Pool.QueryRow(ctx, `SELECT now()`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	got := w.hints.takeRetryAfter(7)
	if lo, hi := until.Sub(after), until.Sub(before); got < lo || got > hi {
		t.Errorf("Retry-After %s (no Date) waits %s, want until then on the database clock: between %s and %s (the worker's clock is %s ahead)",
			until.UTC().Format(http.TimeFormat), got, lo, hi, ahead)
	}
}
