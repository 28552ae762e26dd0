package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// holdOwnerLimitLock holds owner's max_live_jobs advisory lock in an open
// transaction, as a replica cut off in the middle of a claim batch carrying
// one of the owner's claims does until the server notices (TCP keepalive:
// hours by default).
func (b *bundle) holdOwnerLimitLock(t *testing.T, owner string) {
	t.Helper()
	b.hold(t, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, owner)
}

func limitedClaim(t *testing.T, owner, key string) store.NewJob {
	nj := newJob(t, owner, "triage", key, `{"k":"`+key+`"}`)
	nj.MaxLive = 100
	return nj
}

// One batch carrying several claims of an owner whose max_live_jobs lock is
// held is split claim by claim, and every one of that owner's claims waits
// the batch's lock wait (100 ms) for the same held lock again, one after the
// other; every caller of the batch (other owners' claims, the wins) is told
// only at the end. With N such claims the whole batch is held up
// (1 + N) × 100 ms, not the "one or two of the batch's 100 ms waits" of
// docs/lifecycle.md. A failure on the owner's lock (liveLimitBusyError) says
// which lock: the owner's other claims would meet it too.
func TestHeldOwnerLockSplitsBatchClaimByClaim(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	freeJob, freeAtt := b.running(t, "free-job")
	b.holdOwnerLimitLock(t, "acme")

	var mu sync.Mutex
	var sent []int
	b.st.SetOnBatched(func(stmts int) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, stmts)
	})
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	created, claimErrs, won, winErrs := b.st.PathBatch(guard,
		[]store.NewJob{limitedClaim(t, "acme", "a1"), limitedClaim(t, "acme", "a2"), limitedClaim(t, "acme", "a3"),
			limitedClaim(t, "acme", "a4"), newJob(t, "globex", "triage", "g1", `{"k":"g1"}`)},
		[]store.Completion{win(freeJob, freeAtt)})
	b.st.SetOnBatched(nil)

	for i := range 4 {
		if !errors.Is(claimErrs[i], store.ErrLiveLimitBusy) {
			t.Fatalf("acme's claim %d: err %v, want ErrLiveLimitBusy", i, claimErrs[i])
		}
	}
	if claimErrs[4] != nil || !created[4] {
		t.Fatalf("globex's claim: created %v, err %v", created[4], claimErrs[4])
	}
	if winErrs[0] != nil || !won[0] {
		t.Fatalf("the win: won %v, err %v", won[0], winErrs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	// Enough: the failed batch, its wins, the claims that take no held
	// owner's lock (together), and acme's claims tried once more together
	// (or failed at once with the batch's error): acme's lock waited for
	// twice at most, not once per claim.
	if len(sent) > 5 {
		t.Fatalf("batched transactions sent %v (statements each): %d; want at most 5 — acme's 4 claims were each tried on their own, "+
			"each waiting 100 ms for the same held max_live_jobs lock, while globex's claim and the win waited for all of them", sent, len(sent))
	}
}

// Across batches: once a claim of the owner found its max_live_jobs lock held
// past its batch's wait and its alone wait (ErrLiveLimitBusy), the owner's
// next creations (new keys, resends) still go through the shared batches,
// each failing a batch of other tenants' claims and wins after 100 ms and
// splitting it, for as long as the lock stays held. A key row found held is
// remembered (heldKeys: its resends go alone at once, "hold up no batch");
// the owner's lock, which every creation of the owner needs, is not.
func TestHeldOwnerLockNotRemembered(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	b.holdOwnerLimitLock(t, "acme")
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()

	if _, _, err := b.st.CreateJob(guard, limitedClaim(t, "acme", "k1")); !errors.Is(err, store.ErrLiveLimitBusy) {
		t.Fatalf("first creation while acme's lock is held: err %v, want ErrLiveLimitBusy", err)
	}

	var queued atomic.Int32
	b.st.SetOnQueued(func(int) { queued.Add(1) })
	t.Cleanup(func() { b.st.SetOnQueued(nil) })
	var sent atomic.Int32
	b.st.SetOnBatched(func(int) { sent.Add(1) })
	t.Cleanup(func() { b.st.SetOnBatched(nil) })
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, _, err := b.st.CreateJob(guard, limitedClaim(t, "acme", k)); !errors.Is(err, store.ErrLiveLimitBusy) {
			t.Fatalf("creation %s while acme's lock is held: err %v, want ErrLiveLimitBusy", k, err)
		}
	}
	if n := queued.Load(); n > 0 {
		t.Fatalf("acme's next 3 creations, with its max_live_jobs lock known held, were queued into the shared batches %d times "+
			"(%d transactions sent): each fails the batch carrying it after 100 ms and splits it, for as long as the lock is held", n, sent.Load())
	}
}

// The wins of a batch that failed on a held row (an owner's max_live_jobs
// lock, a key's row) are told their outcome as soon as they have run on
// their own, not after the batch's claims have been split and run again
// (which, with a held row, takes at least one more batchLockWait).
func TestFailedBatchTellsWinsBeforeClaimsSplit(t *testing.T) {
	for _, held := range []string{"owner lock", "key row"} {
		t.Run(held, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			freeJob, freeAtt := b.running(t, "free-job-"+strings.ReplaceAll(held, " ", "-"))
			claims := []store.NewJob{limitedClaim(t, "acme", "a1"), limitedClaim(t, "acme", "a2"),
				newJob(t, "globex", "triage", "g1", `{"k":"g1"}`)}
			if held == "owner lock" {
				b.holdOwnerLimitLock(t, "acme")
			} else {
				claims = []store.NewJob{newJob(t, "acme", "triage", "a1", `{"k":"a1"}`), newJob(t, "globex", "triage", "g1", `{"k":"g1"}`)}
				if _, _, err := b.st.CreateJob(ctx, claims[0]); err != nil {
					t.Fatal(err)
				}
				b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'a1' FOR UPDATE`)
			}
			guard, cancel := context.WithTimeout(ctx, hangGuard)
			defer cancel()
			told, claimErrs, winErrs := b.st.PathBatchToldWins(guard, claims, []store.Completion{win(freeJob, freeAtt)})
			if !errors.Is(claimErrs[0], store.ErrBusy) || claimErrs[len(claims)-1] != nil || winErrs[0] != nil {
				t.Fatalf("claims' errors %v, win's %v; want acme's busy, globex's and the win's nil", claimErrs, winErrs)
			}
			// told[0] is the wins' own run; the claims' runs follow.
			if len(told) < 2 {
				t.Fatalf("transactions after the failed batch: %v; want the wins' run and the claims'", told)
			}
			for i, n := range told[1:] {
				if n != 1 {
					t.Fatalf("the claims' run %d after the failed batch was sent with %d of 1 wins told (per run after the batch: %v): "+
						"the win's caller waits for the claims' split, a held row's wait more", i+1, n, told)
				}
			}
		})
	}
}
