package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// takenOverKey is an expired key (acme, triage, "daily") of a cancelled job,
// bound to {"n":1}, that another replica's claim is taking over, for a new job
// bound to {"n":2}, in the open transaction tx: its job is inserted and the key
// row updated and locked, not committed yet.
type takenOverKey struct {
	old   *store.Job
	newID string
	tx    pgx.Tx
}

func takeOverInFlight(t *testing.T, b *bundle) *takenOverKey {
	t.Helper()
	ctx := context.Background()
	old, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "daily", `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, old.ID)
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	const newID = "0190aaaa-0000-7000-8000-000000000001"
	fp := newJob(t, "acme", "triage", "daily", `{"n":2}`).Fingerprint
	if _, err := tx.Exec(ctx, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		VALUES ($1, 'acme', 'triage', 'daily', $2, '1', 'default', '{"n":2}', 'pending')`, newID, fp); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE idempotency_keys SET job_id = $1, fingerprint = $2, created_at = now(), expires_at = NULL
		WHERE owner = 'acme' AND operation = 'triage' AND idempotency_key = 'daily'`, newID, fp); err != nil {
		t.Fatal(err)
	}
	return &takenOverKey{old: old, newID: newID, tx: tx}
}

// commitOnceWaitedOn commits k's transaction as soon as another session
// waits for one of its locks (the key row), which is what the claim running
// until done does; the claim finishing first, without waiting, fails the test.
func (k *takenOverKey) commitOnceWaitedOn(t *testing.T, pool *pgxpool.Pool, done <-chan struct{}) {
	t.Helper()
	ctx := context.Background()
	pid := k.tx.Conn().PgConn().PID()
	for blocked := 0; blocked == 0; {
		select {
		case <-done:
			t.Fatal("the claim finished without waiting for the key row the other claim holds")
		default:
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))`,
			pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// Two replicas take one expired key over at once: the claim that waited on
// the key row creates nothing and must answer with the job the other created
// (one key, one job: every caller gets its id), not the expired job that its
// statement's snapshot still shows — nor, with the new job's request, a 409
// against the expired job's fingerprint.
func TestConcurrentTakeoverOfExpiredKeyAnswersTheNewJob(t *testing.T) {
	b := setup(t)
	k := takeOverInFlight(t, b)
	type outcome struct {
		j       *store.Job
		created bool
		err     error
	}
	res := make(chan outcome, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		j, c, err := b.st.CreateJob(context.Background(), newJob(t, "acme", "triage", "daily", `{"n":2}`))
		res <- outcome{j, c, err}
	}()
	k.commitOnceWaitedOn(t, b.db.Pool, done)
	r := <-res
	if r.err != nil {
		t.Fatalf("claim of the key another claim took over: %v; want the new job %s", r.err, k.newID)
	}
	if r.created || r.j.ID != k.newID {
		t.Fatalf("claim of the key another claim took over answered job %s (created=%v, state %s); want the new job %s, not the expired %s",
			r.j.ID, r.created, r.j.State, k.newID, k.old.ID)
	}
}

// The same, for claims of one batch: the batch's claim of the key and its
// duplicates (requests of the same key in the batch, which take its outcome)
// are all answered from the key as the other claim left it — the same
// request gets the new job, the expired job's request is a reuse of the key.
// The batch waits on the key row until the takeover commits (hangGuard in
// batchLockWait's 100 ms place: a loaded machine may take longer to commit).
func TestConcurrentTakeoverOfExpiredKeyAnswersBatchDuplicates(t *testing.T) {
	b := setup(t)
	k := takeOverInFlight(t, b)
	njs := []store.NewJob{
		newJob(t, "acme", "triage", "daily", `{"n":2}`),
		newJob(t, "acme", "triage", "daily", `{"n":2}`),
		newJob(t, "acme", "triage", "daily", `{"n":1}`),
	}
	var (
		jobs    []*store.Job
		created []bool
		errs    []error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs, created, errs = b.st.ClaimOneBatchWaiting(context.Background(), njs, hangGuard)
	}()
	k.commitOnceWaitedOn(t, b.db.Pool, done)
	<-done
	for i := range 2 {
		switch {
		case errs[i] != nil:
			t.Errorf("claim %d (the new job's request): %v; want the new job %s", i, errs[i], k.newID)
		case created[i] || jobs[i].ID != k.newID:
			t.Errorf("claim %d (the new job's request) answered job %s (created=%v); want the new job %s, not the expired %s",
				i, jobs[i].ID, created[i], k.newID, k.old.ID)
		}
	}
	if !errors.Is(errs[2], store.ErrKeyReused) {
		var id string
		if jobs[2] != nil {
			id = jobs[2].ID
		}
		t.Errorf("claim with the expired job's request: job %q (the expired one is %s), err %v; want ErrKeyReused (the key is the new job's, bound to another request)",
			id, k.old.ID, errs[2])
	}
}
