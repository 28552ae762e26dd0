package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
)

// lockRuns holds an ACCESS EXCLUSIVE lock on conformance_runs (as a migration
// building an index would) until the test ends, and returns a func that
// waits until an insert is queued behind it.
func lockRuns(t *testing.T, e *env) (waiting func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := e.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `LOCK TABLE conformance_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		for {
			var n int
			// Not in tx: a transaction sees one snapshot of pg_stat_activity.
			if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO conformance_runs%' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond) // polling the condition, not waiting it out
		}
	}
}

// A recording the database does not answer (a lock on conformance_runs)
// ends at the second Ctrl-C (Options.Stop) — Run returns while the lock is
// still held, the result not recorded, saying why and to rerun — instead of
// hanging `router conformance run` for as long as the lock lasts. Found by
// review: the insert ran under context.WithoutCancel with no bound.
func TestRecordingEndsAtSecondSignal(t *testing.T) {
	e := newEnv(t)
	e.add("good", oracle(e.answers, nil))
	waiting := lockRuns(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	stop, stopNow := context.WithCancel(context.Background())
	defer cancel()
	defer stopNow()
	type ran struct {
		rep *conformance.Report
		err error
	}
	done := make(chan ran, 1)
	go func() {
		// A record timeout far longer than any test: only Stop can end it.
		rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
			Providers: []string{"good"}, PromptNames: []string{"triage"}, RouterVersion: "test",
			Stop: stop, RecordTimeout: time.Hour})
		done <- ran{rep, err}
	}()
	waiting()
	cancel()    // the first Ctrl-C: the finished result is still being recorded
	stopNow()   // the second: stop recording
	r := <-done // the lock is still held here (released at cleanup)
	if r.err == nil || r.rep == nil || len(r.rep.Results) != 1 {
		t.Fatalf("Run = %+v, %v; want the one result and an error", r.rep, r.err)
	}
	res := r.rep.Results[0]
	if !res.NotRecorded() || r.rep.Passed {
		t.Fatalf("result recorded %v, report passed %v; want not recorded, not passed", res.Recorded, r.rep.Passed)
	}
	for _, want := range []string{"stopped by a second interrupt: rerun `router conformance run --provider good --prompt triage`"} {
		if !strings.Contains(res.RecordError, want) {
			t.Errorf("record_error %q lacks %q", res.RecordError, want)
		}
	}
}

// Without any signal, a recording the database does not answer ends after
// Options.RecordTimeout, the result not recorded with why and to rerun.
func TestRecordingIsBounded(t *testing.T) {
	e := newEnv(t)
	e.add("good", oracle(e.answers, nil))
	lockRuns(t, e) // held for the whole run: the insert cannot finish
	rep, err := conformance.Run(context.Background(), conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		Providers: []string{"good"}, PromptNames: []string{"triage"}, RouterVersion: "test", RecordTimeout: 50 * time.Millisecond})
	if err == nil || rep == nil || len(rep.Results) != 1 {
		t.Fatalf("Run = %+v, %v; want the one result and an error", rep, err)
	}
	res := rep.Results[0]
	if !res.NotRecorded() || rep.Passed {
		t.Fatalf("result recorded %v, report passed %v; want not recorded, not passed", res.Recorded, rep.Passed)
	}
	for _, want := range []string{"the database did not answer within 50ms (a lock on conformance_runs? a failover?): rerun `router conformance run --provider good --prompt triage`"} {
		if !strings.Contains(err.Error(), want) || !strings.Contains(res.RecordError, want) {
			t.Errorf("error %q / record_error %q lacks %q", err, res.RecordError, want)
		}
	}
}
