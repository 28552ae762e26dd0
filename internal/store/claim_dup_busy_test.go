package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A claim that shares its batch with a claim of the same key for another
// request (another fingerprint) takes that claim's outcome only when it is
// its own too. When the key's row is held by another transaction past the
// batch's lock wait, the key's claim fails busy, and so would this one: it is
// told busy and waits for the row alone, as the key's claim does, and is
// answered busy (a *BusyError naming the key: nothing was stored, resend it)
// when the row is still held. It was told instead that its outcome was not
// known (errClaimNotRun) and went back to the batches; a client resending
// the other request kept a claim of it ahead of this one in every batch, so
// every try ended the same way, and the caller was answered "claim not run",
// a 500, for a claim of which nothing ran.
func TestClaimBehindBusyClaimOfAnotherRequestIsBusy(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	holder := inFlightKeyClaim(t, b, "0190bbbb-0000-7000-8000-0000000000d1", "dup")

	nj := newJob(t, "acme", "triage", "dup", `{"k":"mine"}`)
	nj.Params = json.RawMessage(`{}`)
	other := newJob(t, "acme", "triage", "dup", `{"k":"another request"}`)
	var batches atomic.Int32
	b.st.SetBeforePathBatch(func() []store.NewJob {
		// The other request's claim comes first, so it goes out for the key.
		batches.Add(1)
		return []store.NewJob{other}
	})

	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	_, _, err := b.st.CreateJob(guard, nj)
	var be *store.BusyError
	if !errors.Is(err, store.ErrBusy) || !errors.As(err, &be) || !strings.Contains(be.What, `"dup"`) {
		t.Fatalf("a claim behind a claim of its key for another request, the key's row held by another transaction "+
			"(%d batches): err %v; want a *BusyError naming the key (nothing was stored: resend it)", batches.Load(), err)
	}

	// Nothing of it was stored: once the holder rolls back, the key and the
	// request's job are gone.
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var keys, jobs int
	if err := b.db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'dup'),
		(SELECT count(*) FROM jobs WHERE idempotency_key = 'dup')`).Scan(&keys, &jobs); err != nil {
		t.Fatal(err)
	}
	if keys != 0 || jobs != 0 {
		t.Fatalf("after the busy answer and the holder's rollback: %d key rows, %d jobs of the key; want none", keys, jobs)
	}
}
