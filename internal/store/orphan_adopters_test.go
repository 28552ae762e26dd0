package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Eight replicas adopt the same orphans at once (ClaimOrphans, with the
// resume path's AcquireJobLease racing it on some of them): each orphan gets
// exactly one owner, and the stored lease owner is the one that was told it
// adopted the job. The statements' conditions on the database clock keep it
// so; a claim that took rows without re-checking them would hand one job to
// two replicas.
func TestConcurrentAdoptersTakeEachOrphanOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const jobs, adopters, rounds = 30, 8, 5
	for round := range rounds {
		var ids []string
		for i := range jobs {
			nj := newJob(t, "acme", "triage", fmt.Sprintf("orphan-%d-%d", round, i), `{}`)
			nj.LeaseOwner, nj.LeaseFor = "dead", time.Hour
			j, _, err := b.st.CreateJob(ctx, nj)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second'
			WHERE id = ANY($1::uuid[])`, ids); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[string][]string{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for a := range adopters {
			owner := fmt.Sprintf("replica-%d", a)
			wg.Go(func() {
				<-start
				for range 4 {
					claimed, err := b.st.ClaimOrphans(ctx, owner, time.Hour, 3, nil)
					if err != nil {
						t.Error(err)
						return
					}
					for _, id := range ids[:5] {
						if ok, err := b.st.AcquireJobLease(ctx, id, owner, time.Hour); err != nil {
							t.Error(err)
							return
						} else if ok {
							claimed = append(claimed, id)
						}
					}
					mu.Lock()
					for _, id := range claimed {
						if n := len(got[id]); n == 0 || got[id][n-1] != owner {
							got[id] = append(got[id], owner)
						}
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(got) == 0 {
			t.Fatalf("round %d: precondition: no orphan was adopted", round)
		}
		for id, owners := range got {
			if len(owners) > 1 {
				t.Fatalf("round %d: job %s adopted by %v", round, id, owners)
			}
			var lo string
			if err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, id).Scan(&lo); err != nil {
				t.Fatal(err)
			}
			if lo != owners[0] {
				t.Fatalf("round %d: job %s: lease owner %q, adopter %q", round, id, lo, owners[0])
			}
		}
	}
}
