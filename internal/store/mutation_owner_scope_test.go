package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// The owner-scoped writes (resolve, cancel, retry) find only the owner's own
// jobs, in the store itself (SPEC §4: another owner's job is not found): a
// caller of another owner gets ErrNotFound and changes nothing.
func TestOwnerScopedWritesRefuseAnotherOwnersJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "scoped", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, j.ID, ""); err != nil || s != store.JobUnknown {
		t.Fatalf("settle: %s %v", s, err)
	}
	for _, outcome := range []string{"succeeded", "failed"} {
		_, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "globex", JobID: j.ID, Seq: a.Seq, Outcome: outcome,
			Result: json.RawMessage(`{"ok":true}`)})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("globex resolving acme's attempt as %s: err=%v, want ErrNotFound", outcome, err)
		}
	}
	if err := b.st.CancelJob(ctx, "globex", j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("globex cancelling acme's job: err=%v, want ErrNotFound", err)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobUnknown || got.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("after another owner's writes: job %s, attempt %s; want both unknown", got.State, got.Attempts[0].State)
	}
	// Failed, acme's job may be retried by acme only.
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "failed"}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || s != store.JobFailed {
		t.Fatalf("settle: %s %v", s, err)
	}
	if err := b.st.RetryJob(ctx, "globex", j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("globex retrying acme's job: err=%v, want ErrNotFound", err)
	}
	if s, err := b.st.JobStateAny(ctx, j.ID); err != nil || s != store.JobFailed {
		t.Fatalf("job %s %v after another owner's retry, want failed", s, err)
	}
}
