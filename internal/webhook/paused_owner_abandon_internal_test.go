package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// docs/api.md: deliveries are "retried ... for at least webhooks.retry_for
// (24 h), then abandoned", and "The Retry-After does not extend
// webhooks.retry_for". An endpoint that answers every request 503 with
// Retry-After: 3600 (a maintenance page left up, a decommissioned service
// behind a load balancer) got, per replica, one try per hour for the owner in
// all: after each pause the first delivery back was tried, its 503 started a
// new pause, and every other delivery back was held again — none of them a
// try, so none was ever abandoned, and with steady traffic the pile grew until
// retention deleted the events still pending, with no abandonment counted or
// logged (found by review). Here twelve events already past retry_for,
// played on River's schedule (each comes back when its snooze says): within
// three hours (simulated) all are abandoned, each counted and logged as an
// abandoned event is.
func TestPausedOwnerEventsPastRetryForAreAbandoned(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	const n = 12
	ids := make([]string, n)
	for i := range n {
		ids[i] = cancelledJobEvent(t, db, "acme", "k"+strconv.Itoa(i))
	}
	// Every event is past webhooks.retry_for (24h): its next failed try abandons it.
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours'`); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	w := NewWorker(db.Store, Config{Timeout: 5 * time.Second, RetryFor: 24 * time.Hour, Now: clock,
		Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	obs, logs := &outcomes{}, &lockedBuffer{}
	w.observer, w.log = obs, slog.New(slog.NewTextHandler(logs, nil))
	start := now
	due := make([]time.Time, n)
	for i := range due {
		due[i] = start
	}
	ended := make([]bool, n)
	for {
		next := -1
		for i := range n {
			if !ended[i] && (next < 0 || due[i].Before(due[next])) {
				next = i
			}
		}
		if next < 0 || due[next].Sub(start) > 3*time.Hour {
			break
		}
		mu.Lock()
		now = due[next]
		mu.Unlock()
		err := w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: int64(next + 1), Attempt: 1, MaxAttempts: 10000},
			Args: DeliverArgs{EventID: ids[next], Owner: "acme"}})
		var snoozed *river.JobSnoozeError
		if errors.As(err, &snoozed) {
			due[next] = due[next].Add(snoozed.Duration)
			continue
		}
		ended[next] = true // delivered, or given up on (river.JobCancel)
	}
	var abandoned int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE status = 'abandoned'`).Scan(&abandoned); err != nil {
		t.Fatal(err)
	}
	if abandoned < n {
		t.Fatalf("three hours (simulated) after %d events past webhooks.retry_for came due, %d are abandoned and %d still pending, "+
			"after %d requests in all: the owner's 503 Retry-After: 3600 pause lets one try through per hour, and held events are never abandoned",
			n, abandoned, n-abandoned, requests.Load())
	}
	// Each counted and logged (warn) as an abandoned event is, and the held
	// ones say why, without a request.
	var counted int
	for _, o := range obs.got {
		if o == OutcomeAbandoned {
			counted++
		}
	}
	if l := logs.String(); counted != n || strings.Count(l, "level=WARN msg=\"webhook event abandoned") != n {
		t.Errorf("%d of %d abandoned events counted (%q) and logged:\n%s", counted, n, obs.got, l)
	}
	var held int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE status = 'abandoned' AND last_error LIKE '%Retry-After%nothing was sent%'`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if want := n - int(requests.Load()); held != want {
		t.Errorf("%d abandoned events say they were held past webhooks.retry_for by the owner's pause, want %d (%d were sent)", held, want, requests.Load())
	}
}

// A held delivery is read only when its River job (created with its event, on
// the database clock) is webhooks.retry_for old; the abandonment is then
// decided on the event's age as the database measures it: a job that only
// seems that old (a replica's clock ahead of the database's) is snoozed for
// the pause, its event left pending and its send lease free.
func TestHeldDeliveryIsAbandonedOnTheDatabasesClock(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	young, old := cancelledJobEvent(t, db, "acme", "young"), cancelledJobEvent(t, db, "acme", "old")
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: db.Store}
	w := NewWorker(st, Config{RetryFor: 24 * time.Hour, Secrets: map[string]string{"acme": "whsec_c2VjcmV0"}})
	w.paused.pause("acme", time.Now(), time.Hour)
	work := func(id string, created time.Time) error {
		return w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000, CreatedAt: created},
			Args: DeliverArgs{EventID: id, Owner: "acme"}})
	}
	var snooze *river.JobSnoozeError
	if err := work(young, time.Now()); !errors.As(err, &snooze) || st.reads != 0 {
		t.Fatalf("a young held delivery: %v after %d reads, want a snooze without a read", err, st.reads)
	}
	if err := work(young, time.Now().Add(-25*time.Hour)); !errors.As(err, &snooze) || st.reads != 1 {
		t.Fatalf("a held delivery whose job only seems old: %v after %d reads, want a snooze after one", err, st.reads)
	}
	ev, _, _, err := db.Store.ClaimEventForDelivery(ctx, young, store.SendClaim{Token: "t", For: time.Minute})
	if err != nil || ev.Status != store.EventPending || !ev.SendLease.Held || ev.Tries != 0 {
		t.Fatalf("the young event after it: %+v, %v; want pending, untried, its send lease free", ev, err)
	}
	var cancelled *river.JobCancelError
	if err := work(old, time.Now().Add(-25*time.Hour)); !errors.As(err, &cancelled) {
		t.Fatalf("a held delivery past webhooks.retry_for: %v, want river.JobCancel", err)
	}
	var status string
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM job_events WHERE id = $1`, old).Scan(&status); err != nil || status != store.EventAbandoned {
		t.Fatalf("the old event: %q, %v; want abandoned", status, err)
	}
}
