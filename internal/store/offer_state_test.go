package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// OfferCompletion says what a valid output's attempt was recorded as: only an
// attempt whose job another attempt won lost a race. An output that came after
// its job was cancelled is recorded cancelled, and one that came after its
// attempt was resolved keeps the resolution; both used to be reported as a
// lost race (internal/race counted router_races_lost_total for them). Found
// by review.
func TestOfferCompletionSaysWhatItRecorded(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	offer := func(j *store.Job, a *store.Attempt) store.Offered {
		t.Helper()
		o, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
			Result: json.RawMessage(`{"ok":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}

	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "offer-race", `{}`))
	first, second := startAttempt(t, b, j.ID, "p1", store.RolePrimary), startAttempt(t, b, j.ID, "p2", store.RoleHedge)
	if o := offer(j, first); !o.Won || o.State != store.AttemptWon {
		t.Fatalf("first answer: %+v, want won", o)
	}
	if o := offer(j, second); o.Won || o.State != store.AttemptLost {
		t.Fatalf("second answer: %+v, want lost", o)
	}

	j, _, _ = b.st.CreateJob(ctx, newJob(t, "acme", "triage", "offer-cancelled", `{}`))
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	if o := offer(j, a); o.Won || o.State != store.AttemptCancelled {
		t.Fatalf("answer after the job's cancellation: %+v, want cancelled", o)
	}

	j, _, _ = b.st.CreateJob(ctx, newJob(t, "acme", "triage", "offer-resolved", `{}`))
	a = startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "failed", Note: "test"}); err != nil {
		t.Fatal(err)
	}
	if o := offer(j, a); o.Won || o.State != store.AttemptFailed {
		t.Fatalf("answer after the attempt was resolved failed: %+v, want the resolution kept (failed)", o)
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'discarded'`, a.ID); n != 1 {
		t.Fatalf("%d discarded events for the resolved attempt's answer, want 1", n)
	}
}
