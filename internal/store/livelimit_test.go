package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// limitedJob is a claim of owner's key under max_live_jobs limit.
func limitedJob(t *testing.T, owner, key string, limit int) store.NewJob {
	nj := newJob(t, owner, "triage", key, fmt.Sprintf(`{"key":%q}`, key))
	nj.MaxLive = limit
	return nj
}

// uniqueOwner is an owner name of this test alone: advisory locks are the
// database's, shared by every test's schema.
func uniqueOwner(prefix string) string { return prefix + "-" + strings.ToLower(rand.Text()[:10]) }

// holdOwnerLock takes owner's max_live_jobs lock in a transaction of the test
// and returns its release.
func holdOwnerLock(t *testing.T, b *bundle, owner string) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, owner); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			if err := tx.Rollback(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

// lockWaiters counts the transactions waiting for owner's max_live_jobs lock.
func lockWaiters(t *testing.T, b *bundle, owner string) int {
	return count(t, b, `SELECT count(*) FROM pg_locks l,
		(SELECT `+store.LiveLimitLockHashSQL+` AS h) k
		WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 1
		  AND l.classid = ((k.h >> 32) & 4294967295)::oid AND l.objid = (k.h & 4294967295)::oid`, owner)
}

type claimResult struct {
	job     *store.Job
	created bool
	err     error
}

// D1: two replicas' batches claiming new jobs of one owner at once, each
// within max_live_jobs on its own, never together take the owner past it: the
// database counts under the owner's lock. Each claim statement's insert of its
// key waits, with its snapshot already taken, on an advisory lock the test
// holds (a trigger): without the owner's lock, taken in a statement before
// the claim, both count the same live job and both create one. With it, one
// claim waits for the lock; once both wait (on the test's lock or the
// owner's), the test lets go: exactly one job is created, the other claim
// refused with ErrLiveLimit.
//
// The waits are ones the claims stay in until the test lets go: the
// trigger's has no lock_timeout, and the claim behind the owner's lock, whose
// batch gives up on it after 100 ms, waits for it alone for minutes
// (SetAloneLockWait). The keys' rows were held instead by uncommitted
// inserts, which the claim statement waited for only its 100 ms: a poll that
// did not see both claims waiting within them (a loaded machine) never saw
// them, and waited for ever.
func TestLiveLimitHeldAcrossStores(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	owner := uniqueOwner("lim")
	if _, created, err := b.st.CreateJob(ctx, limitedJob(t, owner, "seed", 2)); err != nil || !created {
		t.Fatalf("seed: created=%v err=%v", created, err)
	}
	replicaA, replicaB := store.New(b.db.Pool, store.Options{}), store.New(b.db.Pool, store.Options{})
	const lockKey = `hashtextextended('hold-key-inserts/' || current_schema(), 0)`
	b.exec(t, `CREATE FUNCTION hold_key_insert() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(`+lockKey+`);
    RETURN NEW;
END $$`)
	b.exec(t, `CREATE TRIGGER hold_key_insert BEFORE INSERT ON idempotency_keys FOR EACH ROW
		WHEN (NEW.idempotency_key IN ('k-0', 'k-1')) EXECUTE FUNCTION hold_key_insert()`)
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var holder int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(`+lockKey+`)) l`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`); err != nil {
				t.Error(err)
			}
		}
	}
	defer release()
	defer store.SetAloneLockWait(10 * time.Minute)()
	results := make(chan claimResult, 2)
	for i, st := range []*store.Store{replicaA, replicaB} {
		nj := limitedJob(t, owner, fmt.Sprintf("k-%d", i), 2)
		go func() {
			j, c, err := st.CreateJob(ctx, nj)
			results <- claimResult{j, c, err}
		}()
	}
	// Wait until both claims wait: on the test's lock, or on the owner's.
	waiting := func() int {
		return count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holder) +
			lockWaiters(t, b, owner)
	}
	for deadline := time.Now().Add(hangGuard); waiting() < 2; {
		select {
		case r := <-results:
			t.Fatalf("a claim returned (created=%v err=%v) before both waited: the test did not set up its case", r.created, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two claims never both waited within %s", hangGuard)
		}
		time.Sleep(2 * time.Millisecond) // polling pg_locks
	}
	release()
	created, refused := 0, 0
	for range 2 {
		r := <-results
		switch {
		case r.err == nil && r.created:
			created++
		case errors.Is(r.err, store.ErrLiveLimit):
			refused++
			var le *store.LiveLimitError
			if !errors.As(r.err, &le) || le.Limit != 2 || le.Owner != owner {
				t.Errorf("refusal %v: want a *LiveLimitError of owner %s, limit 2", r.err, owner)
			}
		default:
			t.Errorf("claim: created=%v err=%v", r.created, r.err)
		}
	}
	if created != 1 || refused != 1 {
		t.Errorf("created %d, refused %d: want 1 and 1 (limit 2, one live already)", created, refused)
	}
	if n, err := b.st.CountLiveJobs(ctx, owner); err != nil || n != 2 {
		t.Errorf("live jobs = %d (%v), want exactly the limit, 2", n, err)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE owner = $1`, owner); n != 2 {
		t.Errorf("key rows = %d, want 2: a refused claim stores nothing", n)
	}
}

// Within one batch the owner's earlier new claims count too: three new claims
// of an owner with one live job and a limit of 2 create one; a replay of the
// live key in the same batch is answered with its job, never refused.
func TestLiveLimitWithinOneBatch(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	owner := uniqueOwner("lim")
	seed, _, err := b.st.CreateJob(ctx, limitedJob(t, owner, "seed", 2))
	if err != nil {
		t.Fatal(err)
	}
	jobs, created, errs := b.st.ClaimOneBatch(ctx, []store.NewJob{
		limitedJob(t, owner, "a", 2), limitedJob(t, owner, "b", 2), limitedJob(t, owner, "seed", 2), limitedJob(t, owner, "c", 2),
		limitedJob(t, owner, "b", 2), // a duplicate of a refused claim
	})
	if errs[0] != nil || !created[0] {
		t.Errorf("a: created=%v err=%v, want created", created[0], errs[0])
	}
	for _, i := range []int{1, 3, 4} {
		if !errors.Is(errs[i], store.ErrLiveLimit) {
			t.Errorf("claim %d: created=%v err=%v, want ErrLiveLimit", i, created[i], errs[i])
		}
	}
	if errs[2] != nil || created[2] || jobs[2].ID != seed.ID {
		t.Errorf("replay at the limit: created=%v err=%v, want the seed job %s", created[2], errs[2], seed.ID)
	}
	if n, _ := b.st.CountLiveJobs(ctx, owner); n != 2 {
		t.Errorf("live jobs = %d, want 2", n)
	}
}

// A claim whose key already holds a job is never refused by the limit: the
// replay is answered with the job, a different request under the key is the
// usual ErrKeyReused.
func TestLiveLimitReplayAtLimit(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	owner := uniqueOwner("lim")
	held, _, err := b.st.CreateJob(ctx, limitedJob(t, owner, "held", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.st.CreateJob(ctx, limitedJob(t, owner, "new", 1)); !errors.Is(err, store.ErrLiveLimit) {
		t.Fatalf("new job at the limit: err=%v, want ErrLiveLimit", err)
	}
	j, created, err := b.st.CreateJob(ctx, limitedJob(t, owner, "held", 1))
	if err != nil || created || j.ID != held.ID {
		t.Errorf("replay at the limit: created=%v err=%v job=%v, want job %s", created, err, j, held.ID)
	}
	other := limitedJob(t, owner, "held", 1)
	other.Input, other.Fingerprint = []byte(`{"other":1}`), []byte("other")
	if _, _, err := b.st.CreateJob(ctx, other); !errors.Is(err, store.ErrKeyReused) {
		t.Errorf("another request under the held key: err=%v, want ErrKeyReused", err)
	}
}

// An owner without a limit takes no lock and runs no count: its claims go
// through while its lock key is held elsewhere, however many jobs it has.
func TestLiveLimitUnlimitedOwnerUnaffected(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	owner := uniqueOwner("free")
	holdOwnerLock(t, b, owner)
	for i := range 5 {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, created, err := b.st.CreateJob(ctx, limitedJob(t, owner, fmt.Sprint(i), 0))
		cancel()
		if err != nil || !created {
			t.Fatalf("claim %d of an unlimited owner: created=%v err=%v", i, created, err)
		}
	}
	if n, _ := b.st.CountLiveJobs(ctx, owner); n != 5 {
		t.Errorf("live jobs = %d, want 5", n)
	}
}
