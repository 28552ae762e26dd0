package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A batch of claims and wins that a held key row fails after its lock wait
// is split at once: its wins run together, each claim on its own. Running the
// claims together again first (as before) waited for the held row once more,
// holding up the batch's other claims and wins another lock wait (found in
// review: about 200–300 ms instead of the documented 100 ms). Counted in
// batched transactions sent: the failed batch, its wins, and one per claim.
func TestHeldKeySplitsItsBatchAtOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`)); err != nil {
		t.Fatal(err)
	}
	freeJob, freeAtt := b.running(t, "free-job")
	b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held-key' FOR UPDATE`)

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
		[]store.NewJob{newJob(t, "acme", "triage", "a-fresh", `{"k":"a"}`), newJob(t, "acme", "triage", "held-key", `{"k":"held-key"}`),
			newJob(t, "acme", "triage", "z-fresh", `{"k":"z"}`)},
		[]store.Completion{win(freeJob, freeAtt)})
	b.st.SetOnBatched(nil)

	var busy *store.BusyError
	if !errors.As(claimErrs[1], &busy) {
		t.Fatalf("claim of the held key: err %v, want a BusyError", claimErrs[1])
	}
	for _, i := range []int{0, 2} {
		if claimErrs[i] != nil || !created[i] {
			t.Fatalf("unrelated claim %d: created %v, err %v; want created", i, created[i], claimErrs[i])
		}
	}
	if winErrs[0] != nil || !won[0] {
		t.Fatalf("unrelated win: won %v, err %v; want won", won[0], winErrs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	// The failed batch (claims and wins: 2 statements), its wins (1), each
	// claim alone (1 each).
	if want := []int{2, 1, 1, 1, 1}; len(sent) != len(want) {
		t.Fatalf("batched transactions sent %v (statements each); want %v: the failed batch, its wins, then each claim on its own — not the claims together again first", sent, want)
	}
}
