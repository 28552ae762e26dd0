package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// `router migrate` stopped by a signal while it waits for the migration lock
// says it was stopped, what is applied and to run it again; it used to say
// only "context canceled".
func TestMigrateStoppedBySignalSaysSo(t *testing.T) {
	db, _, cfg := freshDatabase(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// Another process migrating: the migration lock (store.migrationLockID) held.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7245003711)"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(7245003711)") //nolint:errcheck
	sig, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the signal, once migrate waits for the lock
		defer cancel()
		for {
			var waiting bool
			err := db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND classid = 1 AND objid = 2950036415 AND objsubid = 1)`).Scan(&waiting)
			if err != nil || waiting {
				return
			}
			time.Sleep(10 * time.Millisecond) // polling pg_locks: the wait has no other sign
		}
	}()
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(sig, []string{"migrate", "--config", cfg}) })
	if code != 1 || !strings.Contains(stderr, "stopped by a signal") || !strings.Contains(stderr, "no migration was applied") ||
		!strings.Contains(stderr, "run `router migrate` again") {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 1 saying it was stopped, nothing was applied and to run it again", code, stdout, stderr)
	}
}
