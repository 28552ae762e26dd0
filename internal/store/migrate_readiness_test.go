package store_test

import (
	"context"
	"testing"
)

// A database migrated by a newer router (a migration of its own and a newer
// River's, which this binary does not know) is current for this binary: in a
// rolling upgrade the older replicas stay ready, and so does a rollback. River's
// own ExistingVersions fails on such a version ("not found in migrator
// bundle"), which made every older replica's /readyz answer 503.
func TestNewerMigrationsKeepTheDatabaseCurrent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO river_migration (line, version) VALUES ('main', 99);
		INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_from_a_newer_router.sql')`); err != nil {
		t.Fatal(err)
	}
	current, err := b.st.MigrationsCurrent(ctx)
	if err != nil || !current {
		t.Fatalf("migrations current %v (%v) with newer versions present, want true and no error", current, err)
	}
}

// A River migration this binary knows that the database lacks makes it not
// current, with no error; so do River's tables missing altogether, as before.
func TestMissingRiverMigrationIsNotCurrent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM river_migration WHERE line = 'main' AND version = 2`); err != nil {
		t.Fatal(err)
	}
	current, err := b.st.MigrationsCurrent(ctx)
	if err != nil || current {
		t.Fatalf("migrations current %v (%v) without River's migration 2, want false and no error", current, err)
	}
	if _, err := b.db.Pool.Exec(ctx, `DROP TABLE river_migration`); err != nil {
		t.Fatal(err)
	}
	current, err = b.st.MigrationsCurrent(ctx)
	if err != nil || current {
		t.Fatalf("migrations current %v (%v) without River's table, want false and no error", current, err)
	}
}
