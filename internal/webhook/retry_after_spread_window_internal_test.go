package webhook

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

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The redelivery window (webhooks.retry_for + backoff_cap + timeout) is how
// long retention keeps a job whose event is pending. A try that fails just
// before its event is retry_for old, answered 503 with a Retry-After of
// backoff_cap or more, is retried backoff_cap later plus the spread
// (spreadWait: up to an eighth, at most 30 s) — up to 30 s past a window
// that left 10 s (the try's own timeout) for it. With retention.jobs short,
// retention deleted the job while that retry was due: the retry found
// nothing and ended, the event neither delivered nor abandoned. Here the
// retry comes due at the latest it may less half the spread: the window must
// keep its job, and the retry delivers it.
func TestRetryAfterRetryAtTheEndOfItsSpreadFindsItsEvent(t *testing.T) {
	ctx := context.Background()
	wc := config.Webhooks{Timeout: config.Duration(10 * time.Second), RetryFor: config.Duration(24 * time.Hour),
		BackoffCap: config.Duration(time.Hour)}
	db := testdb.New(t, store.Options{RedeliveryWindow: wc.RedeliveryWindow()})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "7200") // more than backoff_cap: the wait is the cap
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	id := cancelledJobEvent(t, db, "acme", "k1")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	retryFor, cap, timeout := wc.RetryFor.D(), wc.BackoffCap.D(), wc.Timeout.D()
	exec(`UPDATE job_events SET created_at = now() - $2::interval WHERE id = $1`, id, retryFor-time.Minute)

	w := NewWorker(db.Store, Config{Timeout: timeout, RetryFor: retryFor, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	w.setBackoff(Backoff{Base: 5 * time.Second, Cap: cap})
	job := func(attempt int) *river.Job[DeliverArgs] {
		return &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000},
			Args: DeliverArgs{EventID: id, Owner: "acme"}}
	}
	if err := w.Work(ctx, job(1)); err == nil {
		t.Fatal("the try answered 503 returned no error, want a retry")
	}
	if after := w.hints.takeRetryAfter(1); after != cap {
		t.Fatalf("the retry waits for the receiver's %s, want backoff_cap (%s), spread (spreadWait)", after, cap)
	}

	// The retry's due time, at the latest: the failed try read its event
	// younger than retry_for and lasted up to its job's time and its
	// record's (config.DeliveryTryMax); then backoff_cap and the spread.
	// Half the spread is left to the test's own statements.
	latest := retryFor + config.DeliveryTryMax(timeout) + cap + spreadMax(cap)
	w.paused = ownerPauses{} // the pause the 503 set has ended by then
	exec(`UPDATE job_events SET created_at = now() - $2::interval WHERE id = $1`, id, latest-spreadMax(cap)/2)
	exec(`UPDATE idempotency_keys SET expires_at = now() - interval '2 hours' WHERE job_id = (SELECT job_id FROM job_events WHERE id = $1)`, id)
	exec(`UPDATE jobs SET updated_at = now() - interval '2 hours' WHERE id = (SELECT job_id FROM job_events WHERE id = $1)`, id)
	deleted, err := db.Store.DeleteExpiredJobs(ctx, time.Hour, 100)
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 0 {
		t.Fatalf("retention (retention.jobs: 1h) deleted the job of an event %s old, pending, whose Retry-After retry may be due until it is %s old: "+
			"the redelivery window (%s) leaves no room for the Retry-After spread", latest-spreadMax(cap)/2, latest, wc.RedeliveryWindow())
	}
	if err := w.Work(ctx, job(2)); err != nil {
		t.Fatalf("the retry: %v, want delivered", err)
	}
	var status string
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM job_events WHERE id = $1`, id).Scan(&status); err != nil || status != store.EventDelivered || requests.Load() != 2 {
		t.Fatalf("the event after the retry: %q, %v, %d requests; want delivered after 2", status, err, requests.Load())
	}
}

// The configuration's redelivery window allows for the spread spreadWait
// gives: config.RetryAfterSpread is spreadMax.
func TestRedeliveryWindowAllowsForTheRetryAfterSpread(t *testing.T) {
	for _, cap := range []time.Duration{0, time.Second, 17300 * time.Millisecond, time.Minute, 4 * time.Minute, time.Hour, 24 * time.Hour} {
		if got, want := config.RetryAfterSpread(cap), spreadMax(cap); got != want {
			t.Errorf("config.RetryAfterSpread(%s) = %s, want spreadWait's bound %s", cap, got, want)
		}
		wc := config.Webhooks{RetryFor: config.Duration(24 * time.Hour), BackoffCap: config.Duration(cap), Timeout: config.Duration(10 * time.Second)}
		if got, want := wc.RedeliveryWindow(), 24*time.Hour+cap+spreadMax(cap)+10*time.Second+15*time.Second+config.RedeliveryMargin; got != want {
			t.Errorf("backoff_cap %s: the redelivery window is %s, want %s (retry_for + backoff_cap + its spread + timeout + 15 s for the try's reads and record + config.RedeliveryMargin)", cap, got, want)
		}
	}
}
