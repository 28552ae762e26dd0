package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// prebuiltIndexes are the indexes docs/operations.md ("Upgrading") tells
// operators to build with CREATE INDEX CONCURRENTLY before upgrading, each
// with its table (where a writer holds the build up) and its migration's
// definition.
var prebuiltIndexes = []struct{ name, table, create string }{
	{"attempts_created", "attempts", `CREATE INDEX CONCURRENTLY attempts_created ON attempts (created_at)`},
	{"jobs_open_created", "jobs", `CREATE INDEX CONCURRENTLY jobs_open_created ON jobs (created_at) WHERE state IN ('pending', 'running')`},
	{"race_events_attempt", "race_events", `CREATE INDEX CONCURRENTLY race_events_attempt ON race_events (attempt_id)`},
}

// An operator's documented concurrent build of 0016's or 0019's index that
// fails leaves an INVALID index of that name: the migrations' CREATE INDEX
// IF NOT EXISTS skips it (and 0019 drops jobs_open), so the planner had no
// usable index of open jobs, of race events by attempt, or of attempts by
// creation. Migration 0021 builds each INVALID one again: after migrating,
// all three are valid, with their migrations' definitions, and jobs_open is
// gone.
func TestMigrateRebuildsAnInvalidPrebuiltIndex(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// The schema before 0016, 0019 and 0021, for these indexes.
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM schema_migrations WHERE version IN (16, 19, 21);
		DROP INDEX attempts_created; DROP INDEX jobs_open_created; DROP INDEX race_events_attempt;
		CREATE INDEX jobs_open ON jobs (state) WHERE state IN ('pending', 'running')`); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, ix := range prebuiltIndexes {
		buildConcurrentlyAndFail(t, b, ix.table, ix.create)
		want[ix.name] = indexDef(t, b, ix.name)
		if valid := indexValid(t, b, ix.name); valid {
			t.Fatalf("%s is valid after its interrupted concurrent build; the test needs it INVALID", ix.name)
		}
	}

	applied, err := b.st.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	for _, m := range []string{"0016_attempts_created.sql", "0019_orphan_scan_and_race_event_attempts.sql", "0021_rebuild_invalid_prebuilt_indexes.sql"} {
		if !slices.Contains(applied, m) {
			t.Fatalf("migrate applied %v; want %s among them", applied, m)
		}
	}
	for _, ix := range prebuiltIndexes {
		if !indexValid(t, b, ix.name) {
			t.Errorf("after migrating, %s is still INVALID: the planner never reads it, and nothing says so", ix.name)
		}
		if def := indexDef(t, b, ix.name); def != want[ix.name] {
			t.Errorf("%s rebuilt as %q; want its migration's %q", ix.name, def, want[ix.name])
		}
	}
	var jobsOpen bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT to_regclass('jobs_open') IS NOT NULL`).Scan(&jobsOpen); err != nil {
		t.Fatal(err)
	}
	if jobsOpen {
		t.Error("jobs_open is still there after 0019")
	}

	// Migrating again changes nothing: a valid index is left alone.
	oid := indexOID(t, b, "jobs_open_created")
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM schema_migrations WHERE version = 21`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.Migrate(ctx); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	if again := indexOID(t, b, "jobs_open_created"); again != oid {
		t.Errorf("0021 built the valid jobs_open_created again (oid %d, then %d); want it left alone", oid, again)
	}
}

// buildConcurrentlyAndFail runs create (a CREATE INDEX CONCURRENTLY) the way
// an interrupted operator's build ends: a writer's transaction on table is
// open, so the build must wait for it after registering its index, and a
// lock_timeout ends that wait with an error, which leaves the index INVALID.
// No timing decides the outcome: the writer's transaction stays open until
// the build has failed.
func buildConcurrentlyAndFail(t *testing.T, b *bundle, table, create string) {
	t.Helper()
	ctx := context.Background()
	writer, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Rollback(ctx) //nolint:errcheck
	if _, err := writer.Exec(ctx, `DELETE FROM `+table+` WHERE false`); err != nil {
		t.Fatal(err)
	}
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET lock_timeout = '10ms'`); err != nil {
		t.Fatal(err)
	}
	_, buildErr := conn.Exec(ctx, create)
	if _, err := conn.Exec(ctx, `RESET lock_timeout`); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(buildErr, &pgErr) || pgErr.Code != pgerrcode.LockNotAvailable {
		t.Fatalf("%s behind an open writer: %v; want it to fail on its lock_timeout", create, buildErr)
	}
}

func indexValid(t *testing.T, b *bundle, name string) bool {
	t.Helper()
	var valid bool
	if err := b.db.Pool.QueryRow(context.Background(),
		`SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, name).Scan(&valid); err != nil {
		t.Fatalf("index %s: %v", name, err)
	}
	return valid
}

func indexDef(t *testing.T, b *bundle, name string) string {
	t.Helper()
	var def string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT pg_get_indexdef(to_regclass($1))`, name).Scan(&def); err != nil {
		t.Fatalf("index %s: %v", name, err)
	}
	return def
}

func indexOID(t *testing.T, b *bundle, name string) uint32 {
	t.Helper()
	var oid uint32
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT to_regclass($1)::oid`, name).Scan(&oid); err != nil {
		t.Fatalf("index %s: %v", name, err)
	}
	return oid
}
