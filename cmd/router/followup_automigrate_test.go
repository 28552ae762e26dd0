package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// appendConfig adds lines to the configuration file at path.
func appendConfig(t *testing.T, path, lines string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(lines); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// With auto_migrate false, no command migrates the database: on a database
// never migrated, or migrated by an older router (a rolling upgrade, the
// newer binary's CLI run before `router migrate`), the commands that write
// the router's tables change nothing and say to run `router migrate`.
func TestCommandsRespectAutoMigrateOff(t *testing.T) {
	db, schema, cfg := freshDatabase(t)
	appendConfig(t, cfg, "auto_migrate: false\n")
	ctx := context.Background()
	commands := [][]string{
		{"keys", "create", "--owner", "acme", "--config", cfg},
		{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"},
	}
	refused := func(state string) {
		t.Helper()
		for _, args := range commands {
			var code int
			stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
			if code != 1 || stdout != "" || strings.Count(stderr, "router migrate --config "+cfg) != 1 {
				t.Errorf("router %s on %s with auto_migrate false: exit code %d, stdout %q, stderr %q; want exit code 1 saying to run `router migrate --config %s`",
					strings.Join(args, " "), state, code, stdout, stderr, cfg)
			}
		}
	}

	refused("a database never migrated")
	var tables int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("the commands created %d tables with auto_migrate false; want none", tables)
	}

	// Migrated by a router one migration older.
	if code := run(ctx, []string{"migrate", "--config", cfg}); code != 0 {
		t.Fatalf("migrate: exit code %d", code)
	}
	var last int
	if err := db.Pool.QueryRow(ctx, `DELETE FROM `+schema+`.schema_migrations
		WHERE version = (SELECT max(version) FROM `+schema+`.schema_migrations) RETURNING version`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	refused("a database one migration behind")
	var reapplied, keys, runs int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+schema+`.schema_migrations WHERE version = $1),
		(SELECT count(*) FROM `+schema+`.api_keys), (SELECT count(*) FROM `+schema+`.conformance_runs)`, last).
		Scan(&reapplied, &keys, &runs); err != nil {
		t.Fatal(err)
	}
	if reapplied != 0 || keys != 0 || runs != 0 {
		t.Fatalf("with auto_migrate false: migration %d applied %d times, %d keys, %d conformance runs; want none of them", last, reapplied, keys, runs)
	}
}

// With auto_migrate on (the default), `router keys create` migrates a new
// database before it stores the key, as `router serve` would at start.
func TestKeysCreateMigratesWithAutoMigrateOn(t *testing.T) {
	db, schema, cfg := freshDatabase(t)
	ctx := context.Background()
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"keys", "create", "--owner", "acme", "--config", cfg}) })
	if code != 0 || stdout == "" {
		t.Fatalf("keys create on a new database with auto_migrate on: exit code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var keys int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.api_keys WHERE owner = 'acme'`).Scan(&keys); err != nil || keys != 1 {
		t.Fatalf("%d keys for acme (%v), want 1", keys, err)
	}
}
