package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A caller names its attempt before creating it (NewAttempt.ID), so that it
// can find it again when the creation's answer is lost (AbandonAttempt).
func TestCreateAttemptTakesTheCallersID(t *testing.T) {
	b := setup(t)
	job := leasedJob(t, b, "caller-id", false)
	id := store.NewAttemptID()
	a, err := b.st.CreateAttempt(context.Background(), store.NewAttempt{ID: id, JobID: job.ID, Provider: "p1",
		Role: store.RolePrimary, LeaseOwner: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != id {
		t.Fatalf("attempt created as %s: want the caller's id %s", a.ID, id)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND job_id = $2 AND state = 'starting'`, id, job.ID); n != 1 {
		t.Fatalf("%d starting attempts stored under the caller's id: want 1", n)
	}
}

// A creation whose COMMIT took effect although its caller saw an error (the
// answer lost: a context cut, a dropped connection) leaves a `starting`
// attempt its caller does not know of, which would become `unknown` when its
// lease expired and block the job. AbandonAttempt finds it by the id the
// caller chose and records it as never sent: it then neither blocks the job
// nor counts against max_attempts.
func TestAbandonAttemptSettlesACreationWhoseAnswerWasLost(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	job := leasedJob(t, b, "lost-creation", false)
	lost := errors.New("test: the creation's answer was lost")
	b.st.SetAfterCreateAttempt(func(*store.Attempt) error { return lost })
	id := store.NewAttemptID()
	na := store.NewAttempt{ID: id, JobID: job.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "replica-a",
		MaxInflight: 1, MaxAttempts: 1}
	if _, err := b.st.CreateAttempt(ctx, na); !errors.Is(err, lost) {
		t.Fatalf("CreateAttempt: %v; want the hook's lost answer", err)
	}
	b.st.SetAfterCreateAttempt(nil)
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'starting'`, id); n != 1 {
		t.Fatalf("the test did not set up its case: %d starting attempts under %s", n, id)
	}

	found, err := b.st.AbandonAttempt(ctx, job.ID, id, "the request was never sent: test")
	if err != nil || !found {
		t.Fatalf("AbandonAttempt = %v, %v; want the starting attempt found and settled", found, err)
	}
	var state, kind string
	if err := b.db.Pool.QueryRow(ctx, `SELECT state, coalesce(error->>'kind', '') FROM attempts WHERE id = $1`, id).Scan(&state, &kind); err != nil {
		t.Fatal(err)
	}
	if state != store.AttemptCancelled || kind != "not_sent" {
		t.Fatalf("abandoned attempt is %s (kind %q): want cancelled, not_sent", state, kind)
	}

	// Settled once: a second call finds nothing, and so does an id never created.
	if found, err := b.st.AbandonAttempt(ctx, job.ID, id, "again"); err != nil || found {
		t.Fatalf("second AbandonAttempt = %v, %v; want nothing found", found, err)
	}
	if found, err := b.st.AbandonAttempt(ctx, job.ID, store.NewAttemptID(), "never created"); err != nil || found {
		t.Fatalf("AbandonAttempt of an id never created = %v, %v; want nothing found", found, err)
	}
	if found, err := b.st.AbandonAttempt(ctx, store.NewAttemptID(), store.NewAttemptID(), "no such job"); err != nil || found {
		t.Fatalf("AbandonAttempt of a job that does not exist = %v, %v; want nothing found", found, err)
	}

	// The job is not blocked, and the attempt never sent does not count
	// against max_attempts (1): another attempt starts.
	na.ID = store.NewAttemptID()
	if _, err := b.st.CreateAttempt(ctx, na); err != nil {
		t.Fatalf("the next attempt after the abandoned one: %v", err)
	}
}

// AbandonAttempt leaves an attempt that has left `starting` alone: it was
// marked running, so its request may have been sent.
func TestAbandonAttemptLeavesARunningAttempt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	job := leasedJob(t, b, "abandon-running", true)
	id := job.Attempts[0].ID // created running, as a job's first attempt is
	if found, err := b.st.AbandonAttempt(ctx, job.ID, id, "test"); err != nil || found {
		t.Fatalf("AbandonAttempt of a running attempt = %v, %v; want it left alone", found, err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, id); n != 1 {
		t.Fatal("the running attempt was changed")
	}
}
