package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// The urgent renewal holdLease wakes the keeper for (a fresh job whose claim
// answered late) is one statement that skips locked rows. When it skips the
// job's attempt (its row held for a moment by another transaction just as
// the job starts), the job's urgent mark is cleared anyway, and the next
// renewal is the next tick — more than a tick and a third after the claim,
// i.e. after the claim's lease ran out. The attempt, in flight on a live
// replica, is then marked unknown by recovery: rgroup9 F1 again.
func TestUrgentRenewalSkippedIsNotRetried(t *testing.T) {
	l := newLateClaim(t, "urgent-skipped")
	ctx := context.Background()
	l.holdRowWhileSubmitting(t, `SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE`, l.attempt())
	l.waitPastClaimLease(t)
	if _, err := l.b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	j := l.b.Job(t, l.job.ID)
	if a := racetest.AttemptOn(j, "primary"); a.State != store.AttemptRunning {
		t.Fatalf("the first attempt, in flight on a live runner, is %s (error %s) after its urgent renewal met its row held by another transaction: "+
			"the urgent mark was cleared and the next renewal waited for the next tick, past the claim's lease; job %s", a.State, a.Error, j.State)
	}
}

// The same with the job's row held rather than the attempt's.
func TestUrgentRenewalSkippedJobRow(t *testing.T) {
	l := newLateClaim(t, "urgent-skipped-job")
	l.holdRowWhileSubmitting(t, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, l.job.ID)
	l.waitPastClaimLease(t)
	var lapsed bool
	if err := l.b.DB.Pool.QueryRow(context.Background(), `SELECT lease_expires_at < now() FROM jobs WHERE id = $1`, l.job.ID).Scan(&lapsed); err != nil {
		t.Fatal(err)
	}
	if lapsed {
		t.Fatalf("the job's lease ran out while it runs on a live runner: its urgent renewal skipped the job's locked row and was not tried again before the claim's lease ended")
	}
}

// holdRowWhileSubmitting has another transaction hold a row (lock, with id)
// as the job starts, until the urgent renewal waits for it (or 3 s pass).
func (l *lateClaim) holdRowWhileSubmitting(t *testing.T, lock, id string) {
	t.Helper()
	ctx := context.Background()
	tx, err := l.b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, lock, id); err != nil {
		t.Fatal(err)
	}
	l.submit(t)
	waitForLockWaiter(t, l.b)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitForLockWaiter returns once a statement waits for a row lock (the urgent
// renewal waiting for the row the test holds), or, when none comes within
// 3 s (a renewal that skipped the row instead of waiting), then.
func waitForLockWaiter(t *testing.T, b *racetest.Bundle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var waiting bool
		if err := b.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lease_expires_at%')`).Scan(&waiting); err != nil {
			if ctx.Err() != nil {
				return
			}
			t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}
