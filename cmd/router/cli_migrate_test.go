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
