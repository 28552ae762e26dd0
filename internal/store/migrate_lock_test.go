package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A migration whose table another transaction holds (a long report, a stuck
// client) waits for the lock only a bounded time, tries again, and gives up
// saying why, with nothing of it applied — instead of queueing in front of
// every write to the table for as long as that transaction lasts. Once the
// transaction ends, the migration applies.
func TestMigrationGivesUpOnALockItCannotGet(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	t.Cleanup(store.SetMigrationLockWait(50*time.Millisecond, 3, 10*time.Millisecond))
	// The schema one migration back: 0020 not applied.
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM schema_migrations WHERE version = 20;
		ALTER TABLE api_keys DROP CONSTRAINT api_keys_webhook_previous, DROP COLUMN webhook_previous_secret, DROP COLUMN webhook_previous_until;
		ALTER TABLE webhook_owners DROP COLUMN previous_secret, DROP COLUMN previous_until`); err != nil {
		t.Fatal(err)
	}
	holder, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck
	// A reader keeps its lock to the end of its transaction.
	if _, err := holder.Exec(ctx, `SELECT count(*) FROM api_keys`); err != nil {
		t.Fatal(err)
	}
	guard, cancel := context.WithTimeout(ctx, 30*time.Second) // a hang guard, not a timing assertion
	defer cancel()
	_, err = b.st.Migrate(guard)
	if err == nil || !strings.Contains(err.Error(), "0020") || !strings.Contains(err.Error(), "nothing of this migration was applied") {
		t.Fatalf("migrate behind a held lock: %v; want it to give up on 0020, saying nothing was applied", err)
	}
	current, err := b.st.MigrationsCurrent(ctx)
	if err != nil || current {
		t.Fatalf("migrations current %v (%v) after giving up, want false", current, err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	applied, err := b.st.Migrate(ctx)
	if err != nil || len(applied) != 1 || !strings.HasPrefix(applied[0], "0020") {
		t.Fatalf("migrate once the lock is free: %v %v, want 0020 applied", applied, err)
	}
}
