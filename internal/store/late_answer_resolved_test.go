package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A stalled attempt's valid answer that comes after an operator resolved the
// attempt `succeeded` is not a win: the job's result is the operator's, the
// answer is discarded with a race event, and the usage the provider billed
// for it is kept on the attempt (which had none).
func TestLateAnswerAfterResolvedSucceededIsNotAWin(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "late-after-resolve", `{}`))
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "succeeded", Result: json.RawMessage(`{"by":"operator"}`)}); err != nil {
		t.Fatal(err)
	}
	off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
		Result: json.RawMessage(`{"by":"provider"}`), Usage: map[string]int{"prompt_tokens": 10, "completion_tokens": 5},
		ProviderResponseID: "resp-1", LatencyMS: 7})
	if err != nil {
		t.Fatal(err)
	}
	if off.Won || off.Job != nil {
		t.Fatalf("late answer reported as won (state %s) although the operator's resolution completed the job", off.State)
	}
	if off.State != store.AttemptWon {
		t.Fatalf("state %q, want won (the resolution's, kept)", off.State)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobSucceeded || string(got.Result) != `{"by": "operator"}` || got.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s result %s attempt %s; want succeeded with the operator's result, attempt won", got.State, got.Result, got.Attempts[0].State)
	}
	var usage map[string]int
	if err := json.Unmarshal(got.Attempts[0].Usage, &usage); err != nil || usage["prompt_tokens"] != 10 {
		t.Fatalf("attempt usage %s, want the provider's (prompt_tokens 10)", got.Attempts[0].Usage)
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'discarded'`, a.ID); n != 1 {
		t.Fatalf("%d discarded race events, want 1", n)
	}
	// A second offer (a batch re-sent) changes nothing more.
	off, err = b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
		Result: json.RawMessage(`{"by":"provider"}`), Usage: map[string]int{"prompt_tokens": 99}})
	if err != nil || off.Won {
		t.Fatalf("second offer: won=%v err=%v", off.Won, err)
	}
	if err := json.Unmarshal(b.mustAttemptUsage(t, a.ID), &usage); err != nil || usage["prompt_tokens"] != 10 {
		t.Fatalf("usage replaced by a second offer: %v", usage)
	}
}

// A win's own re-sent answer (its first commit's answer lost) is still a
// win: only a resolution's won attempt is not.
func TestLateAnswerOfOwnWinIsStillAWin(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "own-win-resent", `{}`))
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	c := store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{"ok":1}`)}
	if off, err := b.st.OfferCompletion(ctx, c); err != nil || !off.Won {
		t.Fatalf("first offer: won=%v err=%v", off.Won, err)
	}
	if off, err := b.st.OfferCompletion(ctx, c); err != nil || !off.Won || off.State != store.AttemptWon {
		t.Fatalf("re-sent offer: won=%v state=%s err=%v, want won", off.Won, off.State, err)
	}
}

func (b *bundle) mustAttemptUsage(t *testing.T, id string) []byte {
	t.Helper()
	var u []byte
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT usage::text FROM attempts WHERE id = $1`, id).Scan(&u); err != nil {
		t.Fatal(err)
	}
	return u
}
