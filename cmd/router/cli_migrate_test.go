package main

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// SPEC §13: migrations run under an advisory lock, so replicas that migrate
// at once (a rolling deploy's `router migrate` jobs, or serves with
// auto_migrate) are safe: every run succeeds, each migration is applied once,
// and a run after them finds nothing to do.
func TestMigrateConcurrentlyAndAgain(t *testing.T) {
	db, schema, cfg := freshDatabase(t)
	ctx := context.Background()
	const replicas = 4
	codes := make([]int, replicas)
	_, stderr := captureOutput(t, func() {
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Go(func() { codes[i] = run(ctx, []string{"migrate", "--config", cfg}) })
		}
		wg.Wait()
	})
	for i, code := range codes {
		if code != 0 {
			t.Fatalf("migrate #%d of %d at once: exit code %d\nstderr:\n%s", i, replicas, code, stderr)
		}
	}
	var versions, distinct int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT version) FROM `+schema+`.schema_migrations`).
		Scan(&versions, &distinct); err != nil {
		t.Fatal(err)
	}
	if versions == 0 || versions != distinct {
		t.Fatalf("schema_migrations: %d rows, %d versions; want each migration once", versions, distinct)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"migrate", "--config", cfg}) })
	if code != 0 || !strings.Contains(stdout, "up to date") {
		t.Fatalf("migrate again: exit code %d, stdout %q, stderr %q; want \"database is up to date\"", code, stdout, stderr)
	}
}

// A migration that fails does not hide the ones applied before it: each
// commits on its own and stays applied, so `router migrate` lists them before
// the error, and the operator knows where it stopped.
func TestMigrateListsWhatItAppliedBeforeAFailure(t *testing.T) {
	db, schema, cfg := freshDatabase(t)
	ctx := context.Background()
	if code := run(ctx, []string{"migrate", "--config", cfg}); code != 0 {
		t.Fatalf("first migrate: exit code %d", code)
	}
	// Forget the last three migrations: 0021 (idempotent) applies again,
	// 0022 then fails on the column it adds, which exists.
	if _, err := db.Pool.Exec(ctx, `DELETE FROM `+schema+`.schema_migrations WHERE version >= 21`); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"migrate", "--config", cfg}) })
	if code == 0 {
		t.Fatalf("migrate with 0022 failing: exit code 0; stdout %q", stdout)
	}
	if !strings.Contains(stderr, "0022") {
		t.Fatalf("stderr %q does not name the failing migration 0022", stderr)
	}
	if !strings.Contains(stdout, "applied 0021") {
		t.Fatalf("stdout %q does not list 0021, applied before 0022 failed (stderr %q)", stdout, stderr)
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.schema_migrations WHERE version = 21`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("0021 recorded %d times (err %v); want once", n, err)
	}
}
