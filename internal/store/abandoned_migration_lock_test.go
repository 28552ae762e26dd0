package store_test

import (
	"context"
	"testing"
)

// TestAbandonedMigrationTakesNoExclusiveLockWhenTheColumnExists: the
// migration that dates abandoned events documents a pre-step for a large
// job_events (add the column, build the index concurrently). ALTER TABLE …
// ADD COLUMN IF NOT EXISTS takes an ACCESS EXCLUSIVE lock even when the
// column exists, held until the migration commits: every read of job_events
// (the delivery worker, GET /v1/jobs/{id}/events, the dashboard) would wait
// through the backfill. After the pre-step the migration must hold no lock
// on job_events that keeps readers out.
func TestAbandonedMigrationTakesNoExclusiveLockWhenTheColumnExists(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	m := abandonedMigration(t)
	// The schema after the documented pre-step: the column and the index
	// exist, the trigger and its function not yet.
	if _, err := b.db.Pool.Exec(ctx, `DROP TRIGGER job_events_abandoned_at ON job_events; DROP FUNCTION job_event_abandoned()`); err != nil {
		t.Fatal(err)
	}
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		t.Fatalf("migration %s: %v", m.Name, err)
	}
	var exclusive bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_locks WHERE pid = pg_backend_pid()
		AND relation = 'job_events'::regclass AND mode = 'AccessExclusiveLock')`).Scan(&exclusive); err != nil {
		t.Fatal(err)
	}
	if exclusive {
		t.Errorf("migration %s holds an ACCESS EXCLUSIVE lock on job_events though its column already exists: "+
			"every read of job_events waits until it commits", m.Name)
	}
}
