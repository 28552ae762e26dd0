package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// docs/lifecycle.md, "Rows another transaction holds", for a retry: a retry
// of a limited owner's failed job (limits.max_live_jobs) whose row another
// transaction holds waits for the row before it takes the owner's
// max_live_jobs advisory lock. It used to take the lock first and keep it
// through its wait for the row (2 s), so the owner's other creations — keys
// nobody holds — failed their batch on the lock, split it (delaying every
// other owner's claims and wins in it) and were run alone, for as long as the
// retry was resent. Found in review. The retry's wait is lengthened so that
// "the retry waits on the held row" is a state the test observes in
// pg_stat_activity, not a duration it measures.
func TestLimitedOwnersHeldRetryDoesNotStallItsCreations(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	failed := failJob(t, b, "retry-held")
	defer store.SetRetryLockWait(10 * time.Minute)()
	holder, pid := b.hold(t, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, failed.ID)
	alone := onFirstAlone(t, b.st)

	retried := make(chan error, 1)
	go func() { _, err := b.st.RetryJobKeyed(guard, "acme", failed.ID, "", 100); retried <- err }()
	b.awaitBlockedBy(t, pid) // the retry, on the job's row
	// The retry's own locks: pg_locks is the cluster's, and the package's
	// other tests, in schemas of their own, take advisory locks meanwhile.
	ownerLocks := count(t, b, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND pid IN (SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`, pid)

	// The same owner creates another job, under a key nobody holds.
	type claimed struct {
		created bool
		err     error
	}
	other := make(chan claimed, 1)
	nj := newJob(t, "acme", "triage", "free", `{"k":"free"}`)
	nj.MaxLive = 100
	go func() { _, created, err := b.st.CreateJob(guard, nj); other <- claimed{created, err} }()
	freeAlone := false
	select {
	case <-alone:
		freeAlone = true
	case r := <-other:
		other <- r
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	retryErr, r := <-retried, <-other
	if ownerLocks != 0 {
		t.Errorf("while the retry waited for the held job row, %d max_live_jobs advisory lock(s) were held", ownerLocks)
	}
	if freeAlone {
		t.Errorf("the owner's creation under a free key failed its batch on a lock and was run alone: " +
			"the retry kept the owner's max_live_jobs lock while it waited for the held job row")
	}
	if retryErr != nil {
		t.Fatalf("the retry once the row was released: %v", retryErr)
	}
	if r.err != nil || !r.created {
		t.Fatalf("the free key's creation: created %v, err %v", r.created, r.err)
	}
	if j, err := b.st.GetJob(ctx, "acme", failed.ID); err != nil || j.State != store.JobRunning {
		t.Fatalf("after the retry: %v %v; want running", j, err)
	}
}

// A retry of a limited owner's job whose wait for the owner's max_live_jobs
// lock (a creation of the owner's slow to commit, another retry) runs out is
// answered as that — the owner's check is busy (ErrLiveLimitBusy) — not as
// the job being held, and changes nothing. Found in review. (A guard, not a
// threshold, bounds the call: before, the lock was waited for with no bound.)
func TestRetryLimitLockWaitIsTheOwnersCheck(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	failed := failJob(t, b, "retry-limit-busy")
	defer store.SetRetryLockWait(200 * time.Millisecond)()
	holder, _ := b.hold(t, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme")
	guard, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := b.st.RetryJobKeyed(guard, "acme", failed.ID, "", 100)
	t.Logf("error: %v", err)
	if !store.Busy(err) || !errors.Is(err, store.ErrLiveLimitBusy) || strings.Contains(err.Error(), "job "+failed.ID) {
		t.Errorf("a retry whose owner's max_live_jobs lock is held: %v; want busy (ErrLiveLimitBusy) naming the owner's check, not the job", err)
	}
	if j, err := b.st.GetJob(ctx, "acme", failed.ID); err != nil || j.State != store.JobFailed {
		t.Fatalf("after the busy retry: %v %v; want the job still failed", j, err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RetryJobKeyed(ctx, "acme", failed.ID, "", 100); err != nil {
		t.Fatalf("the same retry once the lock was released: %v", err)
	}
}

// A retry of a limited owner's job whose row stays held past its wait is
// still answered as the job being held, not as the owner's check.
func TestLimitedOwnersHeldRetryIsStillBlamedOnTheJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	failed := failJob(t, b, "retry-still-held")
	defer store.SetRetryLockWait(200 * time.Millisecond)()
	holder, _ := b.hold(t, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, failed.ID)
	_, err := b.st.RetryJobKeyed(ctx, "acme", failed.ID, "", 100)
	if !store.Busy(err) || errors.Is(err, store.ErrLiveLimitBusy) || !strings.Contains(err.Error(), "job "+failed.ID) {
		t.Fatalf("a retry of a held job: %v; want busy naming the job", err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
