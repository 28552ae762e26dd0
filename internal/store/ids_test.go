package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/store"
)

// Job and attempt ids are version 7 UUIDs, and ids made later sort later: the
// primary keys and the indexes that lead with a job id take new entries at
// their right edge (docs/performance.md).
func TestIDsAreTimeOrdered(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var prev, last string
	for i := range 5 {
		nj := newJob(t, "acme", "triage", "ordered-"+strconv.Itoa(i), `{"n":1}`)
		nj.First = &store.FirstAttempt{Provider: "p1", Model: "m1", Role: store.RolePrimary}
		nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Minute
		job, created, err := b.st.CreateJob(ctx, nj)
		if err != nil || !created || len(job.Attempts) != 1 {
			t.Fatalf("job %d: created=%v err=%v", i, created, err)
		}
		last = job.ID
		for _, id := range []string{job.ID, job.Attempts[0].ID} {
			u, err := uuid.Parse(id)
			if err != nil || u.Version() != 7 {
				t.Fatalf("id %q: version %d (err %v), want 7", id, u.Version(), err)
			}
			if id <= prev {
				t.Errorf("id %s made after %s sorts before it", id, prev)
			}
			prev = id
		}
	}
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: last, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := uuid.Parse(a.ID); u.Version() != 7 || a.ID <= prev {
		t.Errorf("later attempt %s: version %d, want 7 and after %s", a.ID, u.Version(), prev)
	}
}
