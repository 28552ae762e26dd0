package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// expiredFirstAttempt makes a job whose first attempt recovery marked
// unknown (lease_expired, outcome_unknown), as when its router died.
func expiredFirstAttempt(t *testing.T, b *bundle, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1", time.Minute
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil || got.State != store.JobUnknown || got.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("setup: %+v %v", got, err)
	}
	return j
}

// wonAttempt reads the job's first attempt, which must have won.
func wonAttempt(t *testing.T, b *bundle, jobID string) store.Attempt {
	t.Helper()
	got, err := b.st.GetJobAny(context.Background(), jobID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobSucceeded || got.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s, attempt %s; want succeeded and won", got.State, got.Attempts[0].State)
	}
	return got.Attempts[0]
}

func hasError(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// The valid answer of an attempt that recovery marked unknown wins late
// (lateWin's compare-and-swap): the attempt's outcome is known, so it no
// longer carries the lease_expired error that said it was not.
func TestLateWinClearsLeaseExpiredError(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := expiredFirstAttempt(t, b, "late")
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: j.Attempts[0].ID, ReadVersion: j.Attempts[0].ReadVersion,
		Result: json.RawMessage(`{"ok":true}`), LatencyMS: 3})
	if err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if a := wonAttempt(t, b, j.ID); hasError(a.Error) {
		t.Errorf("won attempt still carries error %s", a.Error)
	}
}

// The batched win (winSQL) leaves no error on the winning attempt either,
// whatever the attempt carried while in flight.
func TestBatchedWinClearsAttemptError(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "batched", `{"n":2}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET error = '{"kind": "timeout", "outcome_unknown": true}' WHERE job_id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: j.Attempts[0].ID, ReadVersion: j.Attempts[0].ReadVersion,
		Result: json.RawMessage(`{"ok":true}`), LatencyMS: 3})
	if err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if a := wonAttempt(t, b, j.ID); hasError(a.Error) {
		t.Errorf("won attempt still carries error %s", a.Error)
	}
}

// A "succeeded" resolution of an attempt that recovery marked unknown keeps
// only the resolution (who resolved it and why) on the won attempt: not the
// lease_expired kind and outcome_unknown that said its outcome was unknown.
func TestResolvedWinKeepsOnlyTheResolution(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := expiredFirstAttempt(t, b, "resolved")
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: 1, Outcome: "succeeded",
		Result: json.RawMessage(`{"ok":true}`), Note: "found in the provider's console"}); err != nil {
		t.Fatal(err)
	}
	a := wonAttempt(t, b, j.ID)
	var e map[string]json.RawMessage
	if err := json.Unmarshal(a.Error, &e); err != nil {
		t.Fatalf("error %s: %v", a.Error, err)
	}
	var res struct{ Kind, Outcome, Message string }
	if err := json.Unmarshal(e["resolution"], &res); err != nil || len(e) != 1 ||
		res.Kind != "resolved" || res.Outcome != "succeeded" || res.Message != "found in the provider's console" {
		t.Errorf("won attempt's error %s; want only its resolution", a.Error)
	}
}
