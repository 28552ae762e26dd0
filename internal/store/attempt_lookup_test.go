package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An attempt records whether its request was sent with the metadata its
// provider's lookup finds it by (attempts.lookup, migration 0035): a job's
// first attempt through the claim (FirstAttempt.Lookup), a later one through
// CreateAttempt (NewAttempt.Lookup). The listing reconciliation reads says
// it (UnknownAttempt.Lookup), false for an attempt created before the
// column existed (NULL): reconciliation trusts a lookup's "no record" only
// for an attempt marked true (rrecov13 F1).
func TestAttemptRecordsWhetherItWasSentForLookup(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	want := map[string]bool{}
	var ids []string
	unknown := func(a *store.Attempt) {
		t.Helper()
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	for i, lookup := range []bool{true, false} {
		nj := newJob(t, "acme", "triage", "first-"+string(rune('a'+i)), `{}`)
		nj.LeaseOwner, nj.First = "test", &store.FirstAttempt{Provider: "p1", Model: "m", Role: store.RolePrimary, Lookup: lookup}
		j, created, err := b.st.CreateJob(ctx, nj)
		if err != nil || !created || len(j.Attempts) != 1 {
			t.Fatalf("create job with its first attempt: created %v, err %v", created, err)
		}
		want[j.Attempts[0].ID] = lookup
		unknown(&j.Attempts[0])
	}
	for i, lookup := range []bool{true, false, false} {
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "later-"+string(rune('a'+i)), `{}`))
		if err != nil {
			t.Fatal(err)
		}
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "test", Lookup: lookup})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		want[a.ID] = lookup
		unknown(a)
	}
	// The last one was created before migration 0035 (or by a replica of
	// the previous version): nothing recorded.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lookup = NULL WHERE id = $1`, ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	var stored []*bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT array_agg(lookup ORDER BY array_position($1::uuid[], id)) FROM attempts WHERE id = ANY($1::uuid[])`,
		ids).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids[:len(ids)-1] {
		if stored[i] == nil || *stored[i] != want[id] {
			t.Errorf("attempt %d: attempts.lookup %v, want %v", i+1, stored[i], want[id])
		}
	}
	listed, err := b.st.ListUnknownAttempts(ctx, []string{"p1"}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(ids) {
		t.Fatalf("listed %d unknown attempts, want %d", len(listed), len(ids))
	}
	for _, u := range listed {
		if u.Lookup != want[u.AttemptID] {
			t.Errorf("attempt %s listed with Lookup %v, want %v", u.AttemptID, u.Lookup, want[u.AttemptID])
		}
	}
}
