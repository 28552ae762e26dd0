package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// Cancelling a job settles every attempt that could still change it (SPEC
// §3, §4, §6.7): those in flight and those whose outcome is unknown become
// `cancelled` in the cancellation's transaction, so that none can win, none is
// left to reconcile or resolve, and the cancelled job never changes again.
func TestCancelSettlesInFlightAndUnknownAttempts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()

	// A running job: its primary in flight, its hedge unknown.
	running, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancel-running", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	primary := startAttempt(t, b, running.ID, "p1", store.RolePrimary)
	hedge := startAttempt(t, b, running.ID, "p2", store.RoleHedge)
	if err := b.st.FinishAttempt(ctx, hedge.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	// An unknown job: its only attempt unknown.
	unknown, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancel-unknown", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	lone := startAttempt(t, b, unknown.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, lone.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, unknown.ID, ""); err != nil || s != store.JobUnknown {
		t.Fatalf("settle: %s %v, want unknown", s, err)
	}

	for _, j := range []*store.Job{running, unknown} {
		before, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
			t.Fatal(err)
		}
		got, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.JobCancelled || got.Version != before.Version+1 {
			t.Fatalf("job %s version %d (was %d), want cancelled with its version bumped", got.State, got.Version, before.Version)
		}
		for _, a := range got.Attempts {
			if a.State != store.AttemptCancelled || a.FinishedAt == nil {
				t.Errorf("job %s (was %s): attempt %d (%s) is %s, want cancelled", j.ID, before.State, a.Seq, a.Role, a.State)
			}
		}
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE state IN ('starting', 'running', 'unknown')`); n != 0 {
		t.Fatalf("%d attempts of cancelled jobs still in flight or unknown", n)
	}
	if got, err := b.st.ListUnknownAttempts(ctx, []string{"p1", "p2"}, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("unknown attempts to reconcile after the cancellations: %+v %v", got, err)
	}

	// Nothing that comes after changes them: the primary's valid answer, a
	// resolution of the formerly unknown attempts.
	won, err := b.st.Complete(ctx, store.Completion{JobID: running.ID, AttemptID: primary.ID, ReadVersion: primary.ReadVersion,
		Result: json.RawMessage(`{"late":true}`)})
	if err != nil || won {
		t.Fatalf("a valid answer after the cancellation: won=%v err=%v, want a loss", won, err)
	}
	for _, r := range []store.Resolution{
		{Owner: "acme", JobID: running.ID, Seq: hedge.Seq, Outcome: "succeeded", Result: json.RawMessage(`{"late":true}`)},
		{Owner: "acme", JobID: unknown.ID, Seq: lone.Seq, Outcome: "failed"},
	} {
		if _, err := b.st.ResolveAttempt(ctx, r); !errors.Is(err, store.ErrStateConflict) {
			t.Errorf("resolving attempt %d of a cancelled job as %s: err=%v, want ErrStateConflict (it is no longer unknown)", r.Seq, r.Outcome, err)
		}
	}
	for _, j := range []*store.Job{running, unknown} {
		got, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.JobCancelled || got.CompletedBy != nil {
			t.Fatalf("cancelled job is now %s (completed_by %v)", got.State, got.CompletedBy)
		}
		for _, a := range got.Attempts {
			if a.State != store.AttemptCancelled {
				t.Errorf("attempt %d of a cancelled job became %s", a.Seq, a.State)
			}
		}
	}
}
