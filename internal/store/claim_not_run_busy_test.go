package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A claim that shares its batch with a claim of the same key for another
// request (another fingerprint) is not run when that claim fails for a
// reason of its own (here an input the database refuses, not a held row):
// its outcome is not known (errClaimNotRun) and CreateJob runs it again.
// When that happens on every try, nothing of this request ran, nor was
// stored: it is answered busy (a *BusyError naming the key, which the API
// answers 503 busy, Retry-After: resend with the same key), not with
// "claim not run", a 500 that says the router failed.
func TestClaimNeverRunForItselfIsBusy(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "notrun", `{"k":"mine"}`)
	nj.Params = json.RawMessage(`{}`)
	refused := nj
	refused.Input, refused.Fingerprint = json.RawMessage(`{"not json`), []byte("another request")

	var batches atomic.Int32
	var alone atomic.Bool // the refused request is not resent
	b.st.SetBeforePathBatch(func() []store.NewJob {
		if alone.Load() {
			return nil
		}
		// The refused request comes first in every batch, so its claim
		// goes out for the key each time, and fails.
		batches.Add(1)
		return []store.NewJob{refused}
	})
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	_, _, err := b.st.CreateJob(guard, nj)
	var be *store.BusyError
	if !store.Busy(err) || !errors.As(err, &be) || !strings.Contains(be.What, `"notrun"`) {
		t.Fatalf("a claim never run for itself (a claim of its key for another request went out ahead of it and "+
			"failed, %d batches): err %v; want a *BusyError naming the key (nothing was stored: resend it)", batches.Load(), err)
	}
	if n := batches.Load(); n < 2 {
		t.Fatalf("the claim went out in %d batches, want every try: the test did not set up its case", n)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'notrun'`) +
		count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'notrun'`); n != 0 {
		t.Fatalf("after the busy answer: %d key rows and jobs of the key; want none (nothing was stored)", n)
	}

	// Resent alone, it is run for itself and creates its job.
	alone.Store(true)
	if _, created, err := b.st.CreateJob(guard, nj); err != nil || !created {
		t.Fatalf("the same request resent: created=%v err=%v; want its job created", created, err)
	}
}
