package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// max_inflight bounds every job in the database, under the job row's lock
// (SPEC §6.4, §6.9: the bound holds across replicas, so it cannot rely on one
// orchestrator's memory): with max_inflight attempts in flight CreateAttempt
// refuses another with ErrInflightLimit and creates nothing; once one of them
// has ended, the next may start.
func TestCreateAttemptEnforcesMaxInflight(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "inflight", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	create := func(provider, role string) (*store.Attempt, error) {
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: provider, Role: role,
			LeaseOwner: "test", MaxInflight: 2, MaxAttempts: 10})
		if err == nil {
			if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		return a, err
	}
	first, err := create("p1", store.RolePrimary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := create("p2", store.RoleHedge); err != nil {
		t.Fatalf("second attempt with max_inflight 2: %v", err)
	}
	if _, err := create("p3", store.RoleHedge); !errors.Is(err, store.ErrInflightLimit) {
		t.Fatalf("third attempt in flight with max_inflight 2: err=%v, want ErrInflightLimit", err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1`, j.ID); n != 2 {
		t.Fatalf("%d attempts, want 2: a refused attempt must not be stored", n)
	}
	if err := b.st.FinishAttempt(ctx, first.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if _, err := create("p3", store.RoleFailover); err != nil {
		t.Fatalf("an attempt after one of two in flight ended: %v", err)
	}
}

// max_attempts bounds the attempts of a job's run in the database (SPEC
// §6.4): attempts that ended count, an attempt never sent (not_sent) does not,
// and a caller's retry of the failed job starts a new count.
func TestCreateAttemptEnforcesMaxAttempts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "attempts", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	create := func(provider string) (*store.Attempt, error) {
		return b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: provider, Role: store.RoleFailover,
			LeaseOwner: "test", MaxInflight: 2, MaxAttempts: 2})
	}
	fail := func(provider string) {
		t.Helper()
		a, err := create(provider)
		if err != nil {
			t.Fatalf("attempt on %s: %v", provider, err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
			t.Fatal(err)
		}
	}
	fail("p1")
	// Created but never sent: it does not count.
	unsent, err := create("p2")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.RecordNotSent(ctx, unsent.ID, "the router stopped before sending it"); err != nil {
		t.Fatal(err)
	}
	fail("p2")
	if _, err := create("p3"); !errors.Is(err, store.ErrAttemptLimit) {
		t.Fatalf("third attempt with max_attempts 2: err=%v, want ErrAttemptLimit", err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1`, j.ID); n != 3 {
		t.Fatalf("%d attempts, want 3 (two sent, one not sent)", n)
	}
	if state, err := b.st.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s %v, want failed", state, err)
	}
	// The caller's retry: a new run, counted from here.
	if err := b.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	fail("p1")
	fail("p2")
	if _, err := create("p3"); !errors.Is(err, store.ErrAttemptLimit) {
		t.Fatalf("third attempt of the retried run: err=%v, want ErrAttemptLimit", err)
	}
}
