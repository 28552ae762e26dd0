package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Old jobs rows of which another transaction holds (an operator's UPDATE
// in an open session, such as the one-off cleanup of attempts
// docs/operations.md gives for 0018) do not stop retention: a pass deletes
// every other expired job and leaves those for a later pass. Before, SKIP
// LOCKED skipped only locked job rows, so the oldest-first walk put such a
// job in every batch, whose DELETE then waited for lock_timeout and rolled
// back: nothing was deleted while the lock was held. Here the held jobs are
// the three oldest and a batch holds two: the pass must also not stop at a
// batch of held jobs only, nor choose them again batch after batch.
func TestCleanerPassesOverJobsWithALockedRow(t *testing.T) {
	for _, tc := range []struct{ name, lock string }{ // lock locks rows of the jobs $1
		{"attempt", `UPDATE attempts SET usage = usage WHERE job_id = ANY($1::uuid[])`},
		{"event", `UPDATE job_events SET tries = tries WHERE job_id = ANY($1::uuid[])`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.New(t, store.Options{KeyRetention: time.Hour})
			g := rig{db: db, st: db.Store}
			ctx := context.Background()
			if err := g.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
				t.Fatal(err)
			}
			const retention = 720 * time.Hour
			var held, others []string
			for i, k := range []string{"held-a", "held-b", "held-c"} {
				j := g.succeeded(t, k)
				g.age(t, j.ID, retention+time.Duration(10-i)*time.Hour)
				held = append(held, j.ID)
			}
			for _, k := range []string{"old-a", "old-b", "old-c"} {
				j := g.succeeded(t, k)
				g.age(t, j.ID, retention+time.Hour)
				others = append(others, j.ID)
			}

			holder, err := db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback(ctx) //nolint:errcheck
			if tag, err := holder.Exec(ctx, tc.lock, held); err != nil || tag.RowsAffected() != 3 {
				t.Fatalf("lock the oldest jobs' %ss: %v (%d rows, want 3)", tc.name, err, tag.RowsAffected())
			}

			guard, cancel := context.WithTimeout(ctx, 30*time.Second) // a hang guard, not a timing assertion
			defer cancel()
			c := &maintenance.Cleaner{Store: g.st, After: retention, Batch: 2}
			n, err := c.Once(guard)
			if err != nil || n != 3 {
				t.Fatalf("with the 3 oldest jobs' %ss locked: deleted %d (err %v); want the 3 other expired jobs", tc.name, n, err)
			}
			if left := g.count(t, `SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[])`, others); left != 0 {
				t.Fatalf("%d of the 3 expired jobs nobody holds are left", left)
			}
			if left := g.count(t, `SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[])`, held); left != 3 {
				t.Fatalf("%d of the 3 jobs another transaction holds are left; want all 3", left)
			}

			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Once(ctx); err != nil || n != 3 {
				t.Fatalf("once the locks are released: deleted %d (err %v); want the 3 formerly held jobs", n, err)
			}
		})
	}
}
