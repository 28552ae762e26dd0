package webhook

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// failingHeldRecords is the real store whose RecordDelivery fails, writing
// nothing, while fail is set (a reset connection, a write that timed out).
type failingHeldRecords struct {
	*store.Store
	fail atomic.Bool
}

func (s *failingHeldRecords) RecordDelivery(ctx context.Context, d store.DeliveryTry) (string, error) {
	if s.fail.Load() {
		return "", errors.New("conn reset")
	}
	return s.Store.RecordDelivery(ctx, d)
}

// A held delivery past webhooks.retry_for whose abandonment (nothing sent)
// could not be recorded gives back the send lease it claimed: there is no
// send for it to fence. It kept it, as a try that sent does, and the next
// look found the lease held and was snoozed for the owner's whole pause (an
// hour here) before it could abandon the event.
func TestHeldAbandonmentThatFailsToRecordReleasesTheSendLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	id := cancelledJobEvent(t, db, "acme", "old")
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	st := &failingHeldRecords{Store: db.Store}
	w := NewWorker(st, Config{RetryFor: 24 * time.Hour, Secrets: map[string]string{"acme": "whsec_c2VjcmV0"}})
	w.paused.pause("acme", time.Now(), time.Hour)
	look := func(attempt int) error {
		return w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000,
			CreatedAt: time.Now().Add(-25 * time.Hour)}, Args: DeliverArgs{EventID: id, Owner: "acme"}})
	}

	st.fail.Store(true)
	if err := look(1); err == nil {
		t.Fatal("the look whose record failed returned no error, want the failure (River retries it)")
	}
	var free bool
	if err := db.Pool.QueryRow(ctx, `SELECT sending_until IS NULL AND sender IS NULL FROM job_events WHERE id = $1`, id).Scan(&free); err != nil || !free {
		t.Errorf("the send lease after the failed record: free %v, %v; want released (nothing was sent)", free, err)
	}

	st.fail.Store(false)
	err := look(2)
	if snooze := (*river.JobSnoozeError)(nil); errors.As(err, &snooze) {
		t.Fatalf("the next look snoozed %s: the failed record left the send lease held", snooze.Duration)
	}
	if cancelled := (*river.JobCancelError)(nil); !errors.As(err, &cancelled) {
		t.Fatalf("the next look: %v, want river.JobCancel (abandoned)", err)
	}
	var status string
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM job_events WHERE id = $1`, id).Scan(&status); err != nil || status != store.EventAbandoned {
		t.Fatalf("the event: %q, %v; want abandoned", status, err)
	}
}
