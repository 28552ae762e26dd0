package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run` whose recording waits on the database (a lock on
// conformance_runs) ends at the second Ctrl-C, printing the result NOT
// RECORDED with what to rerun, while the lock is still held. Found by review:
// the recording had no bound, and no signal could stop it.
func TestConformanceRecordingStopsAtSecondSignal(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: always-technical
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	bg := context.Background()
	tx, err := db.Pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(bg) }()
	if _, err := tx.Exec(bg, `LOCK TABLE conformance_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	first, firstSignal := context.WithCancel(bg)
	second, secondSig := context.WithCancel(bg)
	defer firstSignal()
	defer secondSig()
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- conformanceCommand(withSecondSignal(first, second),
			[]string{"run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}, &out, &errOut)
	}()
	for { // until the insert waits on the lock
		var n int
		if err := db.Pool.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO conformance_runs%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond) // polling the condition, not waiting it out
	}
	firstSignal()
	secondSig()
	err = <-done // the lock is still held
	if err == nil {
		t.Fatalf("the command succeeded:\n%s", out.String())
	}
	for _, want := range []string{"NOT RECORDED", "✗ not recorded: stopped by a second interrupt: rerun `router conformance run --provider always-technical --prompt triage`"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s\n(err %v)", want, out.String(), err)
		}
	}
}
