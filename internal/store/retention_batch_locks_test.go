package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A retention batch of n locks the n jobs it chooses and no others; the walk
// over keys released to a newer job goes first (here its job is also the
// older), the walk over keys bound to their job takes the places left. Before, each index's walk locked up to n
// jobs and the batch kept n of the up to 2n: the rest were neither deleted
// nor reported busy, yet stayed locked until the batch ended, and a retry,
// cancellation or resolution of those jobs waited behind it.
func TestRetentionBatchLocksOnlyTheJobsItChose(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	byKey := b.settled(t, "by-key")
	b.expiredAgo(t, byKey.ID, retention+2*time.Hour)
	byRelease := b.released(t, "by-release", retention+3*time.Hour) // the older

	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	chosen, err := store.ChooseExpiredJobs(ctx, tx, retention, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{byKey.ID, byRelease.ID} {
		if slices.Contains(chosen, j) {
			continue
		}
		if _, err := b.db.Pool.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE NOWAIT`, j); err != nil {
			t.Errorf("a batch of 1 chose %v and also holds the lock of %s, which it will neither delete nor report: %v", chosen, j, err)
		}
	}
	if !slices.Equal(chosen, []string{byRelease.ID}) {
		t.Errorf("a batch of 1 chose %v; want the job whose key expired first, %s (released)", chosen, byRelease.ID)
	}
}
