package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// createPauseKey is the advisory lock that pauseCreate holds to pause a
// hedge's CreateAttempt after its insert, before its commit.
const createPauseKey = 7_424_302

// pauseCreate installs, in the test's schema, an AFTER INSERT trigger on
// attempts that makes the transaction inserting a hedge wait on the advisory
// lock createPauseKey, which the returned connection holds, while it holds
// the job's row (CreateAttempt locks it first). release lets it go on.
func pauseCreate(t *testing.T, b *bundle) (release func()) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE FUNCTION create_pause() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			IF NEW.role = 'hedge' THEN
				PERFORM pg_advisory_xact_lock_shared(`+strconv.Itoa(createPauseKey)+`);
			END IF;
			RETURN NULL;
		END $$;
		CREATE TRIGGER create_pause AFTER INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION create_pause();`); err != nil {
		t.Fatal(err)
	}
	hold, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT pg_advisory_lock($1)`, createPauseKey); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := hold.Exec(ctx, `SELECT pg_advisory_unlock($1)`, createPauseKey); err != nil {
			t.Error(err)
		}
		hold.Release()
	}
	t.Cleanup(release)
	return release
}

// assertNotSent checks that attempt id was recorded as never sent, and that a
// MarkAttemptRunning (the orchestrator's last step before sending) refuses
// it: with markFirst, the refusal is what records it; without, the job's
// end already had.
func assertNotSent(t *testing.T, b *bundle, id string, markFirst bool) {
	t.Helper()
	ctx := context.Background()
	mark := func() {
		if err := b.st.MarkAttemptRunning(ctx, id); !errors.Is(err, store.ErrStateConflict) {
			t.Fatalf("MarkAttemptRunning of an attempt of a succeeded job: err = %v, want ErrStateConflict (not sending)", err)
		}
	}
	if markFirst {
		mark()
	}
	var state, kind string
	var leased, finished bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT state, coalesce(error->>'kind', ''), lease_owner IS NOT NULL, finished_at IS NOT NULL
		FROM attempts WHERE id = $1`, id).Scan(&state, &kind, &leased, &finished); err != nil {
		t.Fatal(err)
	}
	if state != store.AttemptCancelled || kind != "not_sent" || leased || !finished {
		t.Fatalf("attempt left %s (kind %q, leased %v, finished %v), want cancelled, not_sent, no lease, finished",
			state, kind, leased, finished)
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1`, id); n != 0 {
		t.Fatalf("%d race event(s) for an attempt never sent, want none", n)
	}
	if !markFirst {
		mark()
	}
}

// primaryAndStartingHedge creates a job (key) with a running primary and a
// hedge created, not yet sent (starting); with expired, the primary's lease
// has expired and recovery made it (and the job) unknown.
func primaryAndStartingHedge(t *testing.T, b *bundle, key string, expired bool) (j *store.Job, primary, hedge *store.Attempt) {
	t.Helper()
	ctx := context.Background()
	j, _, _ = b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{}`))
	primary = startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	hedge, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !expired {
		return j, primary, hedge
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, primary.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	return j, primary, hedge
}

// A hedge created (starting) just before the primary's batched win
// (winSQL) is cancelled as never sent by the win, and is not sent after it.
func TestWinCancelsStartingSibling(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, primary, hedge := primaryAndStartingHedge(t, b, "hedge-after-win", false)
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: primary.ID, ReadVersion: primary.ReadVersion, Result: json.RawMessage(`{"ok":1}`)})
	if err != nil || !won {
		t.Fatalf("primary: won=%v err=%v", won, err)
	}
	assertNotSent(t, b, hedge.ID, false)
}

// The same through the late path (lateWin's casSQL): the primary's lease
// expired (unknown) with a hedge starting, and its late answer wins.
func TestLateWinCancelsStartingSibling(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, primary, hedge := primaryAndStartingHedge(t, b, "hedge-after-late-win", true)
	off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: primary.ID, ReadVersion: primary.ReadVersion,
		Result: json.RawMessage(`{"ok":1}`)})
	if err != nil || !off.Won {
		t.Fatalf("late answer: won=%v state=%s err=%v", off.Won, off.State, err)
	}
	assertNotSent(t, b, hedge.ID, false)
}

// An operator's `succeeded` resolution cancels a starting sibling likewise.
func TestResolveSucceededCancelsStartingSibling(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, primary, hedge := primaryAndStartingHedge(t, b, "hedge-after-resolve", true)
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: primary.Seq, Outcome: "succeeded",
		Result: json.RawMessage(`{"by":"operator"}`)}); err != nil {
		t.Fatal(err)
	}
	assertNotSent(t, b, hedge.ID, false)
}

// The win's statement took its snapshot while the hedge's CreateAttempt held
// the job's row, and waited for it: the hedge, committed after that
// snapshot, is not among the rows the win settles. MarkAttemptRunning must
// still refuse to send it, and record it as never sent.
func TestWinUnseenStartingSiblingNotSent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "hedge-unseen-by-win", `{}`))
	primary := startAttempt(t, b, j.ID, "p1", store.RolePrimary)

	release := pauseCreate(t, b)
	type created struct {
		a   *store.Attempt
		err error
	}
	creating := make(chan created, 1)
	go func() {
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "test"})
		creating <- created{a, err}
	}()
	creator := pausedPID(t, b.db.Pool, createPauseKey, func() bool { return len(creating) > 0 })

	type outcome struct {
		won bool
		err error
	}
	completed := make(chan outcome, 1)
	go func() {
		won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: primary.ID, ReadVersion: primary.ReadVersion,
			Result: json.RawMessage(`{"ok":1}`)})
		completed <- outcome{won, err}
	}()
	if !waitBlockedBy(t, b.db.Pool, creator, func() bool { return len(completed) > 0 }) {
		o := <-completed
		t.Fatalf("the win (won=%v err=%v) returned while the hedge's creation held the job row", o.won, o.err)
	}
	release()
	c := <-creating
	if c.err != nil {
		t.Fatalf("create hedge: %v", c.err)
	}
	if o := <-completed; o.err != nil || !o.won {
		t.Fatalf("primary: won=%v err=%v", o.won, o.err)
	}
	assertNotSent(t, b, c.a.ID, true)
}

// MarkAttemptRunning reads its job's state without taking the job's row: a
// job row another transaction holds does not hold up the send.
func TestMarkRunningDoesNotWaitForJobRow(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "mark-running-held-row", `{}`))
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, j.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatalf("MarkAttemptRunning with the job row held: %v", err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running' AND started_at IS NOT NULL`, a.ID); n != 1 {
		t.Fatal("attempt not running")
	}
}
