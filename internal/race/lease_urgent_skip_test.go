package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// The urgent renewal holdLease wakes the keeper for (a fresh job whose claim
// answered late) is one statement that skips locked rows. When it skips the
// job's attempt (its row held for a moment by another transaction just as
// the job starts), the job's urgent mark is cleared anyway, and the next
// renewal is the next tick — more than a tick and a third after the claim,
// i.e. after the claim's lease ran out. The attempt, in flight on a live
// replica, is then marked unknown by recovery: rgroup9 F1 again.
func TestUrgentRenewalSkippedIsNotRetried(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s
	called := make(chan struct{})
	release := make(chan struct{})
	b := racetest.New(t, racetest.Options{Lease: lease, Providers: []racetest.Provider{{Name: "primary",
		OnCall: func(int, *providers.Request) { close(called) },
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		}}}})
	defer close(release)
	ctx := context.Background()
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "urgent-skipped",
		PromptVersion: "2", Route: "default", Input: []byte(`{"subject":"Login","body":"I cannot log in."}`),
		LeaseOwner: "test-runner", LeaseFor: lease}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", nj.Input)
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	var claimLease time.Time
	if err := b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at FROM attempts WHERE id = $1`, att).Scan(&claimLease); err != nil {
		t.Fatal(err)
	}
	// The claim's answer came 4.5 s after its statement (within the fence).
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM (lease_expires_at - $2::interval + interval '4.5 seconds') - clock_timestamp())))
		FROM attempts WHERE id = $1`, att, lease); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds the attempt's row as the job starts, until the
	// urgent renewal waits for it.
	tx, err := b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE`, att); err != nil {
		t.Fatal(err)
	}
	b.Runner.SubmitNew(job, plan)
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the first attempt was not sent")
	}
	waitForLockWaiter(t, b)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM ($1::timestamptz + interval '100 milliseconds') - clock_timestamp())))`,
		claimLease); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	j := b.Job(t, job.ID)
	if a := racetest.AttemptOn(j, "primary"); a.State != store.AttemptRunning {
		t.Fatalf("the first attempt, in flight on a live runner, is %s (error %s) after its urgent renewal met its row held by another transaction: "+
			"the urgent mark was cleared and the next renewal waited for the next tick, past the claim's lease; job %s", a.State, a.Error, j.State)
	}
}

func TestUrgentRenewalSkippedJobRow(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s
	called := make(chan struct{})
	release := make(chan struct{})
	b := racetest.New(t, racetest.Options{Lease: lease, Providers: []racetest.Provider{{Name: "primary",
		OnCall: func(int, *providers.Request) { close(called) },
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		}}}})
	defer close(release)
	ctx := context.Background()
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "urgent-skipped-job",
		PromptVersion: "2", Route: "default", Input: []byte(`{"subject":"Login","body":"I cannot log in."}`),
		LeaseOwner: "test-runner", LeaseFor: lease}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", nj.Input)
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	var claimLease time.Time
	if err := b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at FROM attempts WHERE id = $1`, att).Scan(&claimLease); err != nil {
		t.Fatal(err)
	}
	// The claim's answer came 4.5 s after its statement (within the fence).
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM (lease_expires_at - $2::interval + interval '4.5 seconds') - clock_timestamp())))
		FROM attempts WHERE id = $1`, att, lease); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds the attempt's row as the job starts, until the
	// urgent renewal waits for it.
	tx, err := b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, job.ID); err != nil {
		t.Fatal(err)
	}
	b.Runner.SubmitNew(job, plan)
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the first attempt was not sent")
	}
	waitForLockWaiter(t, b)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM ($1::timestamptz + interval '100 milliseconds') - clock_timestamp())))`,
		claimLease); err != nil {
		t.Fatal(err)
	}
	var lapsed bool
	if err := b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at < now() FROM jobs WHERE id = $1`, job.ID).Scan(&lapsed); err != nil {
		t.Fatal(err)
	}
	if lapsed {
		t.Fatalf("the job's lease ran out while it runs on a live runner: its urgent renewal skipped the job's locked row and was not tried again before the claim's lease ended")
	}
}

// waitForLockWaiter returns once a statement waits for a row lock (the urgent
// renewal waiting for the row the test holds), or, when none comes within
// 3 s (a renewal that skipped the row instead of waiting), then.
func waitForLockWaiter(t *testing.T, b *racetest.Bundle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var waiting bool
		if err := b.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lease_expires_at%')`).Scan(&waiting); err != nil {
			if ctx.Err() != nil {
				return
			}
			t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}
