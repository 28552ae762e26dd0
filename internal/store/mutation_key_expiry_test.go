package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A key expires `retention` after its job becomes terminal, set by the
// transition's own statement on the database's clock, on every path to a
// terminal state; a key whose job is not terminal — running, or `unknown` —
// never expires, and a failed job retried by its caller takes its key back
// from expiry (SPEC §5.5). The setup's retention is one hour.
func TestKeyExpiresOnlyWhenItsJobIsTerminal(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// keyState is "none" for a key that never expires, "retention" for one
	// that expires an hour after the job finished, and what it is otherwise.
	keyState := func(id string) string {
		t.Helper()
		var s string
		if err := b.db.Pool.QueryRow(ctx, `SELECT CASE
				WHEN k.expires_at IS NULL THEN 'none'
				WHEN j.finished_at IS NOT NULL AND k.expires_at = j.finished_at + interval '1 hour' THEN 'retention'
				ELSE 'expires at ' || k.expires_at::text || ' for a job finished at ' || coalesce(j.finished_at::text, 'never') END
			FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id WHERE j.id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(what string, j *store.Job, wantState, wantKey string) {
		t.Helper()
		got, err := b.st.GetJobAny(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != wantState {
			t.Fatalf("%s: job %s, want %s", what, got.State, wantState)
		}
		if k := keyState(j.ID); k != wantKey {
			t.Errorf("%s (%s): key %s, want %s", what, got.State, k, wantKey)
		}
		if (got.KeyExpiresAt == nil) != (wantKey == "none") {
			t.Errorf("%s: key_expires_at %v in the job resource, want an expiry: %v", what, got.KeyExpiresAt, wantKey != "none")
		}
	}
	n := 0
	running := func() (*store.Job, store.Completion) {
		n++
		return runningJob(t, b.st, "acme", "expiry-"+itoa(n))
	}
	unknown := func() *store.Job {
		t.Helper()
		j, _ := running()
		if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
			t.Fatal(err)
		}
		if s, err := b.st.SettleJob(ctx, j.ID, ""); err != nil || s != store.JobUnknown {
			t.Fatalf("settle: %s %v", s, err)
		}
		return j
	}

	j, _ := running()
	check("created", j, store.JobRunning, "none")

	// Unknown: not terminal, never expires, even on a clock moved a week on.
	u := unknown()
	check("unknown", u, store.JobUnknown, "none")
	if _, err := b.db.Pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '7 days' WHERE job_id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	again, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "expiry-"+itoa(n), `{"k":"expiry-`+itoa(n)+`"}`))
	if err != nil || created || again.ID != u.ID {
		t.Fatalf("an unknown job's key was released: created=%v err=%v", created, err)
	}
	// Resolved as failed: running again, still no expiry.
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: u.ID, Seq: 1, Outcome: "failed"}); err != nil {
		t.Fatal(err)
	}
	check("unknown resolved as failed", u, store.JobRunning, "none")

	// Every path to a terminal state sets the expiry.
	j, c := running()
	if won, err := b.st.Complete(ctx, c); err != nil || !won {
		t.Fatalf("win: %v %v", won, err)
	}
	check("batched win", j, store.JobSucceeded, "retention")

	j, c = running()
	c.ReadVersion-- // stale: the win takes lateWin's path
	if won, err := b.st.Complete(ctx, c); err != nil || !won {
		t.Fatalf("late win: %v %v", won, err)
	}
	check("late win", j, store.JobSucceeded, "retention")

	u = unknown()
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: u.ID, Seq: 1, Outcome: "succeeded",
		Result: json.RawMessage(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	check("resolved as succeeded", u, store.JobSucceeded, "retention")

	j, _ = running()
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	check("cancelled", j, store.JobCancelled, "retention")

	j, _ = running()
	if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || s != store.JobFailed {
		t.Fatalf("settle: %s %v", s, err)
	}
	check("failed", j, store.JobFailed, "retention")

	// The caller's retry: running again, its key no longer expires.
	if err := b.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	check("retried", j, store.JobRunning, "none")
}
