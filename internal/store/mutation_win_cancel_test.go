package store_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// cancelPauseKey is the advisory lock TestWinBlockedBehindCancelLoses holds to
// pause CancelJob after its writes, before its commit.
const cancelPauseKey = 7_424_301

// pauseTx installs, in the test's schema, an AFTER UPDATE trigger on jobs that
// makes the transaction whose update satisfies cond (a condition on NEW) wait
// on the advisory lock key, which the returned connection holds. release
// lets it go on (idempotent; also run at cleanup). The trigger waits with no
// lock_timeout: the paused transaction may have set one for its own row
// waits (CancelJob's transitionLockWait), and that limit must not end the
// pause — a cancellation that gave up on it rolls back, and the win behind it
// then rightly wins (a test poll slower than that limit once saw exactly that).
func pauseTx(t *testing.T, b *bundle, name, cond string, key int) (release func()) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE FUNCTION `+name+`() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			IF `+cond+` THEN
				PERFORM pg_advisory_xact_lock_shared(`+strconv.Itoa(key)+`);
			END IF;
			RETURN NULL;
		END $$;
		CREATE TRIGGER `+name+` AFTER UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION `+name+`();`); err != nil {
		t.Fatal(err)
	}
	hold, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := hold.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			t.Error(err)
		}
		hold.Release()
	}
	t.Cleanup(release)
	return release
}

// pausedPID waits until a backend waits on the advisory lock key and returns
// its pid; done is polled so that a call that never paused fails the test.
func pausedPID(t *testing.T, pool *pgxpool.Pool, key int, done func() bool) int {
	t.Helper()
	var pid int
	for pid == 0 {
		if done() {
			t.Fatal("the paused call returned without pausing")
		}
		if err := pool.QueryRow(context.Background(), `SELECT coalesce(max(pid), 0) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND objid = $1`, key).Scan(&pid); err != nil {
			t.Fatal(err)
		}
	}
	return pid
}

// waitBlockedBy waits until some backend waits for a lock that pid holds, or
// done reports that the call expected to block has returned instead.
func waitBlockedBy(t *testing.T, pool *pgxpool.Pool, pid int, done func() bool) bool {
	t.Helper()
	for {
		if done() {
			return false
		}
		var blocked bool
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE $1::int = ANY(pg_blocking_pids(pid)))`, pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked {
			return true
		}
	}
}

// The compare-and-swap of SPEC §6.5 is on the version the attempt read: a
// job-level transition (here a cancellation) bumps the version, so a valid
// answer whose win statement took its snapshot before the cancellation
// committed, and then waited for the job row, must find the version moved and
// lose. Its snapshot still shows the attempt running and completed_by NULL: only
// `version = read_version` can stop it from overwriting the cancellation with a
// success (SPEC §3: cancelled never changes again).
func TestWinBlockedBehindCancelLoses(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "win-vs-cancel", true)
	a := j.Attempts[0]

	release := pauseTx(t, b, "cancel_pause", `NEW.state = 'cancelled'`, cancelPauseKey)
	cancelled := make(chan error, 1)
	go func() { cancelled <- b.st.CancelJob(ctx, "acme", j.ID) }()
	canceller := pausedPID(t, b.db.Pool, cancelPauseKey, func() bool { return len(cancelled) > 0 })

	type outcome struct {
		won bool
		err error
	}
	completed := make(chan outcome, 1)
	go func() {
		won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
			Result: json.RawMessage(`{"ok":1}`), LatencyMS: 5})
		completed <- outcome{won, err}
	}()
	if !waitBlockedBy(t, b.db.Pool, canceller, func() bool { return len(completed) > 0 }) {
		o := <-completed
		t.Fatalf("the win (won=%v err=%v) returned while the cancellation held the job row", o.won, o.err)
	}
	release()
	if err := <-cancelled; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	o := <-completed
	if o.err != nil {
		t.Fatalf("complete: %v", o.err)
	}
	if o.won {
		t.Fatal("a win that waited behind the job's cancellation reported won: the cancellation was overwritten")
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobCancelled || got.CompletedBy != nil || got.Result != nil {
		t.Fatalf("job %s completed_by=%v result=%s, want cancelled with no winner", got.State, got.CompletedBy, got.Result)
	}
	if got.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("attempt %s, want cancelled", got.Attempts[0].State)
	}
}
