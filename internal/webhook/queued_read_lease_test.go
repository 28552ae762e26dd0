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

// A try whose job's context ends while its read of the event waits in the
// store's batch queue (behind a batch held up in the database) fails, and
// releases its send lease at once (releaseLease) — but the read, still
// queued, claims the lease afterwards, for a try that no longer exists.
// River's retry then snoozes until that lease runs out, which the release
// was made to prevent (TestATryThatFailsBeforeSendingReleasesItsLease).
func TestATryCutWhileItsReadIsQueuedLeavesNoLease(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL, 5*time.Second)
	other := e.events(t, "acme", e.cancel(t, "acme", "k0").ID)[0].ID
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID
	bg := context.Background()

	// A batch of reads held up in the database (a lock on a table it reads).
	tx, err := e.db.Pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg)
	if _, err := tx.Exec(bg, `LOCK TABLE webhook_owners IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, _, _, err := e.st.ClaimEventForDelivery(bg, other, store.SendClaim{})
		first <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := tx.QueryRow(bg, `SELECT count(*) FROM pg_locks WHERE relation = 'webhook_owners'::regclass AND NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first read never waited")
		}
		time.Sleep(10 * time.Millisecond)
	}

	w := webhook.NewWorker(e.st, webhook.Config{Secrets: map[string]string{"acme": secret}})
	job := func(attempt int) *river.Job[webhook.DeliverArgs] {
		return &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}
	}
	// The try's job runs out of time while its read is queued.
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	err = w.Work(ctx, job(1))
	cancel()
	if err == nil {
		t.Fatal("the cut try returned no error")
	}
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	err = w.Work(bg, job(2)) // River's retry: its read is queued after the cut try's
	if snooze := (*rivertype.JobSnoozeError)(nil); errors.As(err, &snooze) {
		t.Fatalf("the retry snoozed %s: the cut try's queued read claimed the send lease after the try had released it", snooze.Duration)
	}
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the receiver got %d requests, want 1", n)
	}
}
