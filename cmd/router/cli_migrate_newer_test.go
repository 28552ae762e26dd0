package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router migrate` of an older binary (a rollback, an older replica of a
// rolling update) on a database a newer router migrated applies nothing and
// succeeds, but does not call the database up to date: it says how many
// migrations are newer than the binary and lists them, the router's by file
// name and River's by version.
func TestMigrateListsMigrationsNewerThanTheBinary(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO river_migration (line, version) VALUES ('main', 99);
		INSERT INTO schema_migrations (version, name) VALUES (9998, '9998_from_a_newer_router.sql'), (9999, '9999_also_newer.sql')`); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"migrate", "--config", cfg}) })
	if code != 0 {
		t.Fatalf("migrate on a newer database: exit code %d, stderr %q; want 0", code, stderr)
	}
	if strings.Contains(stdout, "up to date") || strings.HasPrefix(stdout, "applied ") || strings.Contains(stdout, "\napplied ") {
		t.Errorf("migrate on a newer database printed %q; want neither \"up to date\" nor an applied migration", stdout)
	}
	for _, want := range []string{"3 migration(s) newer than this binary", "9998_from_a_newer_router.sql, 9999_also_newer.sql, River's migration 99"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("migrate on a newer database printed %q; want it to say %q", stdout, want)
		}
	}
}
