package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A schema_migrations of another tool's in the router's schema (a database
// shared with a Rails application: a varchar version; golang-migrate's: no
// name column) is refused by migrate and by the readiness check, saying to
// give the router a schema of its own. They used to fail with "can't scan
// into dest[0]" or `column "name" does not exist`, and the hint added to
// them said to run `router migrate`, which failed the same way. Found by
// review.
func TestAnotherToolsSchemaMigrationsIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ tool, table string }{
		{"rails", `CREATE TABLE schema_migrations (version varchar PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20240101000000')`},
		{"golang-migrate", `CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL); INSERT INTO schema_migrations VALUES (3, false)`},
	} {
		db := testdb.New(t, store.Options{}) // migrated: the router's table replaced by the tool's
		if _, err := db.Pool.Exec(ctx, `DROP TABLE schema_migrations; `+c.table); err != nil {
			t.Fatal(err)
		}
		_, err := db.Store.Migrate(ctx)
		if !errors.Is(err, store.ErrForeignMigrations) || !strings.Contains(err.Error(), "search_path=") || !strings.Contains(err.Error(), db.Schema+".schema_migrations") {
			t.Errorf("%s: Migrate: %v; want ErrForeignMigrations naming %s.schema_migrations and saying to set search_path", c.tool, err, db.Schema)
		}
		current, err := db.Store.MigrationsCurrent(ctx)
		if !errors.Is(err, store.ErrForeignMigrations) {
			t.Errorf("%s: MigrationsCurrent: %v, %v; want ErrForeignMigrations", c.tool, current, err)
		}
	}
	// The router's own table, migrated or not, is not refused.
	db := testdb.New(t, store.Options{})
	if _, err := db.Store.Migrate(ctx); err != nil {
		t.Errorf("Migrate on the router's schema_migrations: %v", err)
	}
	if _, err := db.Pool.Exec(ctx, `DROP TABLE schema_migrations`); err != nil {
		t.Fatal(err)
	}
	if current, err := db.Store.MigrationsCurrent(ctx); err == nil || errors.Is(err, store.ErrForeignMigrations) || current {
		t.Errorf("MigrationsCurrent without schema_migrations: %v, %v; want PostgreSQL's undefined table (the migrate hint's case)", current, err)
	}
}
