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

// failingReads is the real store whose reads of an event fail (a reset
// connection, a statement timeout), measuring no database clock.
type failingReads struct{ *store.Store }

func (failingReads) ClaimEventForDelivery(context.Context, string, store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	return nil, nil, nil, errors.New("conn reset")
}

// Backoff takes a try for rescued by its age, on this process's clock plus
// the database clock's offset the worker measured. Before any read of an
// event has returned the offset is unmeasured (0): on a replica whose clock
// runs 6 minutes ahead of the database's, a try that failed there (its read
// failed) looked rescued, and River's executor retried it within seconds
// instead of after the 10th failed try's backoff (found by review, rdiff61).
// River's executor asks NextRetry right after Work returned the failure, in
// the same process: that try failed, whatever the clocks say.
func TestFailedTryBeforeAnyClockReadBacksOff(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	id := cancelledJobEvent(t, db, "acme", "k1")
	dbNow := time.Now()
	const ahead = 6 * time.Minute
	procNow := func() time.Time { return time.Now().Add(ahead) }
	w := NewWorker(failingReads{db.Store}, Config{Now: procNow, Secrets: map[string]string{"acme": "whsec_c2VjcmV0"}})
	w.setBackoff(Backoff{Base: 5 * time.Second, Cap: time.Hour, Now: procNow})
	attempted := dbNow.Add(-time.Second) // River's fetch: the database's now()
	row := &rivertype.JobRow{ID: 7, Attempt: 10, MaxAttempts: 10000, State: rivertype.JobStateRunning,
		AttemptedAt: &attempted, CreatedAt: dbNow.Add(-time.Hour)}
	err := w.Work(ctx, &river.Job[DeliverArgs]{JobRow: row, Args: DeliverArgs{EventID: id, Owner: "acme"}})
	if err == nil {
		t.Fatal("the try whose read failed returned no error")
	}
	if off := w.hints.offset(); off != 0 {
		t.Fatalf("the worker measured an offset of %s, want none (no read returned)", off)
	}
	// River's executor asks for the retry next (reportError).
	wait := w.backoff.NextRetry(row).Sub(procNow()) + ahead // on the database's clock
	if least := w.backoff.Base * (1 << 8) / 2; wait < least {
		t.Errorf("the 10th failed try, on a replica %s ahead of the database with no offset measured yet, is retried after %s, "+
			"want a failed try's backoff, at least %s: it was taken for a rescue", ahead, wait.Round(time.Second), least)
	}
}
