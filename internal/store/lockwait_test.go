package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// hangGuard bounds the calls of these tests that used to wait for a held
// row without limit: a guard against a hung test, not a timing assertion
// (the calls under test return after their lock waits, about a second each).
const hangGuard = 3 * time.Minute

// hold opens a transaction that runs q with args and keeps it open, as an
// operator's psql session that ran an UPDATE and went to lunch would: the rows
// q locks stay locked until the test rolls it back (or ends). It returns the
// transaction and its backend's pid.
func (b *bundle) hold(t *testing.T, q string, args ...any) (pgx.Tx, int) {
	t.Helper()
	tx, pid := b.begin(t)
	if tag, err := tx.Exec(context.Background(), q, args...); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("hold %q: %v (%d rows)", q, err, tag.RowsAffected())
	}
	return tx, pid
}

// begin opens a transaction rolled back when the test ends, and returns it
// and its backend's pid.
func (b *bundle) begin(t *testing.T) (pgx.Tx, int) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return tx, pid
}

// awaitBlockedBy waits until some backend waits for a lock that the backend
// pid holds (a condition, polled).
func (b *bundle) awaitBlockedBy(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing ever waited for the locks of backend %d", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// running makes a job with a running first attempt, and returns both.
func (b *bundle) running(t *testing.T, key string) (*store.Job, *store.Attempt) {
	t.Helper()
	j, _, err := b.st.CreateJob(context.Background(), newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	return j, startAttempt(t, b, j.ID, "p1", store.RolePrimary)
}

func win(j *store.Job, a *store.Attempt) store.Completion {
	return store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
		Result: json.RawMessage(`{"from":"` + a.Provider + `"}`), LatencyMS: 5}
}

// Lease expiry passes over a job one of whose rows another transaction holds
// (an operator's open transaction, a replica cut off mid-transaction), settles
// the others, and names the held job in a *BusyError; the next pass, once the
// row is free, settles it. Before, it locked each job with a plain FOR UPDATE
// on the server's lifetime context: one held job row stopped the leader's
// lease expiry — and the orphan adoption and reconciliation behind it — for as
// long as it was held (found in review: 0 of 3 other jobs settled).
func TestExpireAttemptLeasesPassesOverAHeldJob(t *testing.T) {
	for _, tc := range []struct{ name, lock string }{ // lock locks a row of job $1
		{"job row", `UPDATE jobs SET error = 'looking at it' WHERE id = $1`},
		{"attempt row", `UPDATE attempts SET usage = usage WHERE job_id = $1`},
		{"key row", `SELECT FROM idempotency_keys WHERE job_id = $1 FOR UPDATE`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			var held string
			var others []string
			for _, k := range []string{"a", "b", "c", "d"} {
				j, _ := b.running(t, k)
				if k == "b" {
					held = j.ID
				} else {
					others = append(others, j.ID)
				}
			}
			b.exec(t, `UPDATE attempts SET lease_expires_at = now() - interval '1 second'`)
			holder, _ := b.hold(t, tc.lock, held)

			guard, cancel := context.WithTimeout(ctx, hangGuard)
			defer cancel()
			done, err := b.st.ExpireAttemptLeases(guard)
			slices.Sort(done)
			slices.Sort(others)
			var busy *store.BusyError
			if !slices.Equal(done, others) || !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), held) {
				t.Fatalf("with the %s of job %s held: settled %v (err %v); want the 3 others %v settled and a BusyError naming the held job",
					tc.name, held, done, err, others)
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE state = 'unknown'`); n != 3 {
				t.Fatalf("%d attempts unknown, want the other 3 jobs'", n)
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1 AND state = 'running'`, held); n != 1 {
				t.Fatalf("the held job's attempt changed (%d running): it must be left for the next pass", n)
			}

			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			done, err = b.st.ExpireAttemptLeases(guard)
			if err != nil || !slices.Equal(done, []string{held}) {
				t.Fatalf("next pass, the row free: settled %v (err %v), want the formerly held job %s", done, err, held)
			}
		})
	}
}

// unknownJob makes a job whose only attempt is unknown (its lease expired).
func (b *bundle) unknownJob(t *testing.T, key string) *store.Job {
	t.Helper()
	j, _ := b.running(t, key)
	b.exec(t, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, j.ID)
	if done, err := b.st.ExpireAttemptLeases(context.Background()); err != nil || len(done) != 1 {
		t.Fatalf("expire: %v %v", done, err)
	}
	return j
}

// A resolution with a LockWait (reconciliation's) gives up on a job whose row
// another transaction holds, with ErrBusy and nothing written, so that it is
// tried again later instead of holding a reconciler slot for as long as the
// other transaction lasts; one without (an operator's, through the API) waits
// for the row as before and resolves once it is free.
func TestResolveWithLockWaitGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := b.unknownJob(t, "unknown")
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	res := store.Resolution{JobID: j.ID, Seq: 1, Outcome: "failed", Note: "reconciled: no record", LockWait: 100 * time.Millisecond}
	resume, err := b.st.ResolveAttempt(guard, res)
	var busy *store.BusyError
	if resume || !errors.As(err, &busy) || !store.Busy(err) || !strings.Contains(err.Error(), j.ID) {
		t.Fatalf("bounded resolution of a held job: resume %v, err %v; want a BusyError naming the job", resume, err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1 AND state = 'unknown'`, j.ID); n != 1 {
		t.Fatal("a resolution that gave up changed the attempt")
	}

	// An operator's resolution waits for the row.
	type outcome struct {
		resume bool
		err    error
	}
	got := make(chan outcome, 1)
	go func() {
		res.LockWait = 0
		resume, err := b.st.ResolveAttempt(guard, res)
		got <- outcome{resume, err}
	}()
	b.awaitBlockedBy(t, pid)
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if o := <-got; o.err != nil || !o.resume {
		t.Fatalf("unbounded resolution once the row was free: resume %v, err %v; want the job resumed", o.resume, o.err)
	}
}

// A batch of the success path's commits in which one claim's key row and one
// win's job row are held by another transaction fails only those two, with
// lock_not_available, after the batch's bounded lock wait: the other claim
// and the other win commit, and the blocked claim's caller gets ErrBusy (the
// API's 503, retry shortly). Nothing of the blocked win is lost: once the row
// is free it wins. Before, the batch waited on the held row until execTimeout
// (30 s), and every claim and win of the replica queued behind it.
func TestHeldRowsFailOnlyTheirOwnClaimAndWin(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	keyed, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`))
	if err != nil {
		t.Fatal(err)
	}
	heldJob, heldAtt := b.running(t, "held-job")
	freeJob, freeAtt := b.running(t, "free-job")
	holder, _ := b.hold(t, `WITH k AS (SELECT FROM idempotency_keys WHERE idempotency_key = 'held-key' FOR UPDATE)
		UPDATE jobs SET error = 'looking at it' WHERE id = $1 AND (SELECT count(*) FROM k) = 1`, heldJob.ID)

	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	created, claimErrs, won, winErrs := b.st.PathBatch(guard,
		[]store.NewJob{newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`), newJob(t, "acme", "triage", "fresh", `{"k":"fresh"}`)},
		[]store.Completion{win(freeJob, freeAtt), win(heldJob, heldAtt)})
	var busy *store.BusyError
	if !errors.As(claimErrs[0], &busy) || !strings.Contains(claimErrs[0].Error(), `"held-key"`) {
		t.Fatalf("claim of the held key: err %v, want a BusyError naming the key", claimErrs[0])
	}
	if claimErrs[1] != nil || !created[1] {
		t.Fatalf("unrelated claim: created %v, err %v; want created", created[1], claimErrs[1])
	}
	if winErrs[0] != nil || !won[0] {
		t.Fatalf("unrelated win: won %v, err %v; want won", won[0], winErrs[0])
	}
	if !store.Busy(winErrs[1]) || won[1] {
		t.Fatalf("win of the held job: won %v, err %v; want lock_not_available", won[1], winErrs[1])
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, heldAtt.ID); n != 1 {
		t.Fatal("the held job's attempt left flight: its valid answer would be lost")
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.Complete(guard, win(heldJob, heldAtt)); err != nil || !w {
		t.Fatalf("the held job's win once the row is free: won %v, err %v", w, err)
	}
	if j, created, err := b.st.CreateJob(guard, newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`)); err != nil || created || j.ID != keyed.ID {
		t.Fatalf("the held key's claim once the row is free: %v created %v, err %v; want the existing job %s", j, created, err, keyed.ID)
	}
}

// The reviewer's shape: a claim waiting for a key row another transaction
// holds (an operator's open transaction; a replica cut off in the middle of a
// cancellation, retry or resolution) does not stall the replica's other claims
// and wins, which queue behind its batch, and its caller gets ErrBusy after
// the batch's bounded lock wait — not a 500 after the batch's 30 s timeout
// times four tries. A win whose job row is held gives up likewise, with ErrBusy
// after its tries, and its attempt stays in flight (recovery decides when its
// lease expires, as after any failed win).
func TestOneBlockedClaimDoesNotStallEverything(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`)); err != nil {
		t.Fatal(err)
	}
	freeJob, freeAtt := b.running(t, "free-job")
	heldJob, heldAtt := b.running(t, "held-job")
	holder, pid := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held-key' FOR UPDATE`)

	blocked := make(chan error, 1)
	go func() {
		_, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`))
		blocked <- err
	}()
	b.awaitBlockedBy(t, pid) // its batch is in flight, waiting on the key row

	type result struct {
		ok  bool
		err error
	}
	claimed, completed := make(chan result, 1), make(chan result, 1)
	go func() {
		_, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "fresh", `{"k":"fresh"}`))
		claimed <- result{created, err}
	}()
	go func() {
		won, err := b.st.Complete(ctx, win(freeJob, freeAtt))
		completed <- result{won, err}
	}()
	for name, ch := range map[string]chan result{"claim": claimed, "win": completed} {
		select {
		case r := <-ch:
			if r.err != nil || !r.ok {
				t.Fatalf("unrelated %s while the key row is held: ok %v, err %v", name, r.ok, r.err)
			}
		case <-time.After(hangGuard):
			t.Fatalf("unrelated %s never completed while the key row was held", name)
		}
	}
	select {
	case err := <-blocked:
		var busy *store.BusyError
		if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), `"held-key"`) {
			t.Fatalf("claim of the held key: err %v, want a BusyError naming the key", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the claim of the held key never returned")
	}

	// A win whose job row is held: ErrBusy after its tries, the attempt
	// still in flight; the row is held by the same kind of transaction.
	if _, err := holder.Exec(ctx, `UPDATE jobs SET error = 'looking at it' WHERE id = $1`, heldJob.ID); err != nil {
		t.Fatal(err)
	}
	won, err := b.st.Complete(ctx, win(heldJob, heldAtt))
	if won || !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), heldJob.ID) {
		t.Fatalf("win of a held job: won %v, err %v; want ErrBusy naming the job", won, err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, heldAtt.ID); n != 1 {
		t.Fatal("the held job's attempt left flight")
	}
	if _, err := holder.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatalf("the holder's transaction is gone (%v): the test no longer shows a held row", err)
	}
}
