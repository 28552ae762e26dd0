package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Reconciliation of an unknown attempt whose job row another transaction holds
// (an operator's open transaction, a replica cut off mid-transaction) gives up
// after a bounded wait and leaves the attempt unknown for a later pass: the
// pass ends, and its reconciler slot is free again. Once the row is free, the
// next pass resolves it. Before, the resolution waited for the row on the
// server's lifetime context: a held job kept a reconciler slot (and
// RecoverOnce) for as long as it was held.
func TestReconcileGivesUpOnAHeldJob(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	ctx := context.Background()
	holder, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck
	if _, err := holder.Exec(ctx, `UPDATE jobs SET error = error WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}

	passed := make(chan struct{})
	go func() {
		defer close(passed)
		b.runner.RecoverOnce(ctx, 10)
	}()
	select {
	case <-passed:
	case <-time.After(3 * time.Minute): // a hang guard, not a timing assertion
		t.Fatal("a recovery pass never ended while the unknown attempt's job row was held")
	}
	if a := attemptBy(b.job(t, job.ID), "primary"); a.State != store.AttemptUnknown {
		t.Fatalf("primary %s while its job row was held, want still unknown", a.State)
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	b.runner.RecoverOnce(ctx, 10)
	if a := attemptBy(b.job(t, job.ID), "primary"); a.State != store.AttemptFailed || a.ID != j.Attempts[0].ID {
		t.Fatalf("primary %s once the row was free, want failed (the provider has no record of it)", a.State)
	}
}
