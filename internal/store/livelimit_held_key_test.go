package store_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// docs/lifecycle.md, "Rows another transaction holds": a claim whose key row
// is held waits for it alone, "while new batches go on"; the replica's other
// creations are delayed "once, not for as long as the row is held", and
// resends of the held key "go alone at once and hold up no batch". For an
// owner with limits.max_live_jobs too: the claim run alone waits for the held
// key row before it takes the owner's max_live_jobs advisory lock (it used to
// keep the lock through that wait, so every other creation of the owner — a
// different, free key — failed its batch on the lock after 100 ms, splitting
// and delaying every other owner's claims and wins in that batch, and was
// then run alone as if its own key were held). Found in review. The wait
// alone is lengthened so that "the other claim waits on the held key's claim"
// is a state the test observes in pg_stat_activity, not a duration it
// measures.
func TestLimitedOwnersHeldKeyDoesNotStallItsOtherKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxLive int
	}{{"unlimited", 0}, {"max_live_jobs", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			guard, cancel := context.WithTimeout(ctx, hangGuard)
			defer cancel()
			nj := func(key string) store.NewJob {
				j := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
				j.MaxLive = tc.maxLive
				return j
			}
			if _, _, err := b.st.CreateJob(guard, nj("held")); err != nil {
				t.Fatal(err)
			}
			defer store.SetAloneLockWait(10 * time.Minute)()
			holder, pid := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)

			var alones atomic.Int32
			alone := make(chan struct{}, 8)
			b.st.SetOnAlone(func() { alones.Add(1); alone <- struct{}{} })
			t.Cleanup(func() { b.st.SetOnAlone(nil) })

			// A resend of the held key's request: its batch gives up on the
			// row, and it waits for it alone.
			resend := make(chan error, 1)
			go func() { _, _, err := b.st.CreateJob(guard, nj("held")); resend <- err }()
			select {
			case <-alone:
			case err := <-resend:
				t.Fatalf("the held key's resend returned (%v) without waiting alone", err)
			}
			b.awaitBlockedBy(t, pid)
			var claimPID int
			if err := b.db.Pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid).Scan(&claimPID); err != nil {
				t.Fatal(err)
			}

			// The same owner creates another job, under a key nobody holds.
			type claimed struct {
				created bool
				err     error
			}
			other := make(chan claimed, 1)
			go func() {
				_, created, err := b.st.CreateJob(guard, nj("free"))
				other <- claimed{created, err}
			}()
			// Either the creation commits (as it does for an owner without a
			// limit), or its batch gives up on a lock after its 100 ms and the
			// claim of the free key is run alone, as if its key row were held.
			freeAlone := false
			select {
			case <-alone:
				freeAlone = true
			case r := <-other:
				other <- r
			}
			blockedBy := count(t, b, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, claimPID)
			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-other
			if err := <-resend; err != nil {
				t.Fatalf("resend: %v", err)
			}
			if r.err != nil || !r.created {
				t.Fatalf("the free key's creation: created %v, err %v", r.created, r.err)
			}
			if freeAlone {
				t.Errorf("max_live_jobs=%d: the owner's creation under a free key failed its batch on a lock and was run alone "+
					"(%d backend(s) waiting on the held key's alone claim): that claim keeps the owner's max_live_jobs advisory lock "+
					"while it waits for the held key row", tc.maxLive, blockedBy)
			}
		})
	}
}

// A claim of a limited owner whose wait for the owner's max_live_jobs
// advisory lock (held by another batch or replica slow to commit, a retry of
// one of its jobs) ran out is answered as that — the owner's check is busy
// (ErrLiveLimitBusy) — not as its own Idempotency-Key row being held, and the
// key is not remembered as held (heldKeys): its next claim that takes no
// owner's lock goes through the batches. Found in review.
func TestLimitLockWaitIsNotBlamedOnTheKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	holder, _ := b.hold(t, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme")
	nj := newJob(t, "acme", "triage", "free", `{"k":"free"}`)
	nj.MaxLive = 100
	_, _, firstErr := b.st.CreateJob(guard, nj)
	if firstErr == nil {
		t.Fatal("created while the owner's limit lock is held")
	}
	t.Logf("error: %v", firstErr)
	var alone atomic.Bool
	var shared atomic.Int32
	b.st.SetOnAlone(func() {
		if shared.Load() == 0 {
			alone.Store(true)
		}
	})
	b.st.SetOnBatched(func(int) { shared.Add(1) })
	t.Cleanup(func() { b.st.SetOnAlone(nil); b.st.SetOnBatched(nil) })
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// The owner is remembered (heldOwners: its claims that take the lock go
	// alone for a while); the key must not be: a claim of it that takes no
	// owner's lock goes through the batches.
	unlimited := nj
	unlimited.MaxLive = 0
	if _, created, err := b.st.CreateJob(guard, unlimited); err != nil || !created {
		t.Fatalf("created %v, err %v", created, err)
	}
	if store.Busy(firstErr) && strings.Contains(firstErr.Error(), `Idempotency-Key "free"`) {
		t.Errorf("a wait for the owner's max_live_jobs lock is reported as the key's row being held: %v", firstErr)
	}
	if alone.Load() {
		t.Errorf("the free key is remembered as held: its next claim skipped the batches and ran alone")
	}
}

// Nor does it reach other owners: while the limited owner's held key is
// waited for alone, a shared batch that carries one claim of that owner
// (beside another owner's claim and another job's win) goes out as one
// transaction and commits (it used to fail on the owner's advisory lock after
// its 100 ms, and be split and sent again — every such batch, for as long as
// the row was held). Found in review.
func TestLimitedOwnersHeldKeyDoesNotSplitOtherOwnersBatches(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	acme := func(key string) store.NewJob {
		j := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
		j.MaxLive = 100
		return j
	}
	if _, _, err := b.st.CreateJob(guard, acme("held")); err != nil {
		t.Fatal(err)
	}
	freeJob, freeAtt := b.running(t, "free-job")
	defer store.SetAloneLockWait(10 * time.Minute)()
	holder, pid := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)
	alone := onFirstAlone(t, b.st)
	// The hook is set before the resend starts (it reads it), and counts
	// only the batch's transactions.
	var sent atomic.Int32
	var counting atomic.Bool
	b.st.SetOnBatched(func(int) {
		if counting.Load() {
			sent.Add(1)
		}
	})
	t.Cleanup(func() { b.st.SetOnBatched(nil) })
	resend := make(chan error, 1)
	go func() { _, _, err := b.st.CreateJob(guard, acme("held")); resend <- err }()
	select {
	case <-alone:
	case err := <-resend:
		t.Fatalf("the held key's resend returned (%v) without waiting alone", err)
	}
	b.awaitBlockedBy(t, pid)

	counting.Store(true)
	created, claimErrs, won, winErrs := b.st.PathBatch(guard,
		[]store.NewJob{newJob(t, "globex", "triage", "g1", `{"k":"g1"}`), acme("free")},
		[]store.Completion{win(freeJob, freeAtt)})
	counting.Store(false)
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	<-resend
	t.Logf("created=%v claimErrs=%v won=%v winErrs=%v transactions sent=%d", created, claimErrs, won, winErrs, sent.Load())
	if !created[0] || claimErrs[0] != nil || !won[0] || winErrs[0] != nil {
		t.Fatalf("globex's claim: created %v err %v; the win: won %v err %v", created[0], claimErrs[0], won[0], winErrs[0])
	}
	if n := sent.Load(); n != 1 {
		t.Errorf("the batch went out in %d transactions, want 1: a held key row of owner acme failed a batch of "+
			"globex's claim and another job's win on acme's max_live_jobs lock (acme's free key: %v)", n, claimErrs[1])
	}
}

// A limited owner's claim whose batch gave up on the owner's max_live_jobs
// lock waits for it alone up to aloneLockWait (holding nothing meanwhile),
// not only another batchLockWait, and creates its job once the lock is
// released: only the wait for the key row, with the lock held, is short.
// (Lengthened here so the wait is a state the test observes.)
func TestLimitedOwnersAloneClaimWaitsForTheOwnersLock(t *testing.T) {
	b := setup(t)
	guard, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	defer store.SetAloneLockWait(10 * time.Minute)()
	holder, pid := b.hold(t, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme")
	alone := onFirstAlone(t, b.st)
	nj := newJob(t, "acme", "triage", "waits", `{"k":"waits"}`)
	nj.MaxLive = 100
	type claimed struct {
		created bool
		err     error
	}
	done := make(chan claimed, 1)
	go func() { _, created, err := b.st.CreateJob(guard, nj); done <- claimed{created, err} }()
	select {
	case <-alone:
	case r := <-done:
		t.Fatalf("the claim returned (created %v, err %v) without waiting alone for the owner's lock", r.created, r.err)
	}
	b.awaitBlockedBy(t, pid) // the claim, alone, on the owner's lock
	if err := holder.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || !r.created {
		t.Fatalf("once the owner's lock was released: created %v, err %v", r.created, r.err)
	}
}

// A limited owner's claim whose key row stays held past its waits is still
// answered as its key being held (not the owner's check), and the key is
// remembered as held: the next claim of it goes alone at once.
func TestLimitedOwnersHeldKeyIsStillBlamedOnTheKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	nj := newJob(t, "acme", "triage", "held", `{"k":"held"}`)
	nj.MaxLive = 100
	if _, _, err := b.st.CreateJob(guard, nj); err != nil {
		t.Fatal(err)
	}
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	holder, _ := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)
	_, _, err := b.st.CreateJob(guard, nj)
	if !store.Busy(err) || errors.Is(err, store.ErrLiveLimitBusy) || !strings.Contains(err.Error(), `Idempotency-Key "held"`) {
		t.Fatalf("a claim of a held key: %v; want busy naming the key", err)
	}
	var batched atomic.Int32
	var aloneFirst atomic.Bool
	b.st.SetOnBatched(func(int) { batched.Add(1) })
	b.st.SetOnAlone(func() {
		if batched.Load() == 0 {
			aloneFirst.Store(true)
		}
	})
	t.Cleanup(func() { b.st.SetOnAlone(nil); b.st.SetOnBatched(nil) })
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, created, err := b.st.CreateJob(guard, nj); err != nil || created {
		t.Fatalf("the resend once the row was released: created %v, err %v; want the existing job", created, err)
	}
	if !aloneFirst.Load() {
		t.Errorf("the held key was not remembered as held: its next claim went through a batch first")
	}
}
