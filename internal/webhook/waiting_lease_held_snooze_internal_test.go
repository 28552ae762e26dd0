package webhook

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A delivery that waits its owner's turn (here: its owner paused) and whose
// event is past its last look would be abandoned, but another try of the
// event holds its send lease (a rescued job beside the stuck one): nothing
// is decided before that lease ends. It was snoozed capWait(age, wait),
// which is 0 for an event lastLook old: River made the job available again
// at once, and it claimed the held lease again and again until the lease
// ended (found by review, rdiff61). It waits for the lease, as Work does.
func TestWaitingDeliveryOfALeasedEventSnoozesForTheLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	id := cancelledJobEvent(t, db, "acme", "old")
	w := NewWorker(db.Store, Config{RetryFor: 24 * time.Hour, Secrets: map[string]string{"acme": "whsec_c2VjcmV0"}})
	old := w.lastLook() + time.Hour
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - $2::interval,
		sender = 'another-try', sending_until = now() + interval '1 minute' WHERE id = $1`, id, old); err != nil {
		t.Fatal(err)
	}
	w.paused.pause("acme", time.Now(), time.Hour)
	err := w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000,
		CreatedAt: time.Now().Add(-old)}, Args: DeliverArgs{EventID: id, Owner: "acme"}})
	var snoozed *river.JobSnoozeError
	if !errors.As(err, &snoozed) {
		t.Fatalf("the look at an event past its last look whose send lease another try holds: %v, want a snooze", err)
	}
	// The lease has about a minute left; the wait is on the database clock
	// (snooze adds the measured offset, milliseconds here).
	if least := leaseBusyWait + w.hints.offset(); snoozed.Duration < least {
		t.Errorf("snoozed %s while another try holds the event's send lease (about a minute left), want at least %s: "+
			"River makes the job available again at once and it claims the held lease again and again", snoozed.Duration, least)
	}
	var status string
	var held bool
	if err := db.Pool.QueryRow(ctx, `SELECT status, sender = 'another-try' FROM job_events WHERE id = $1`, id).Scan(&status, &held); err != nil {
		t.Fatal(err)
	}
	if status != store.EventPending || !held {
		t.Errorf("the event: %q, held by the other try %v; want pending, its lease left alone", status, held)
	}
}
