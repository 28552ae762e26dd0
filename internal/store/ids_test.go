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

// Outbox events (an owner with a webhook) get version 7 ids from the
// database's default (migration 0014): the first 48 bits are the time in
// milliseconds, never earlier for a later event (two events in one
// millisecond differ in random bits only).
func TestEventIDsAreTimeOrdered(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:9/hook"}); err != nil {
		t.Fatal(err)
	}
	var prev string
	for i := range 3 {
		j := winFresh(t, b.st, "acme", "event-"+strconv.Itoa(i))
		var id string
		if err := b.db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1`, j.ID).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if u, err := uuid.Parse(id); err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("event id %q: version %d variant %v (err %v), want version 7, RFC 9562 variant", id, u.Version(), u.Variant(), err)
		}
		if ms := id[:13]; ms < prev { // 8 + 1 + 4 characters: 48 bits
			t.Errorf("event id %s made after one of time %s has an earlier time", id, prev)
		}
		prev = id[:13]
	}
}
