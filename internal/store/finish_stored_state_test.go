package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// FinishAttemptAs says which state it stored, so that the race counts an
// attempt's end as stored (router_attempts_total): the state asked for, but,
// for an unknown end on a job that has already succeeded (a loser kept
// running after the win), `lost`. An attempt no longer in flight is
// ErrStateConflict, with no state. Found by review (rrace8 F1).
func TestFinishAttemptAsSaysWhatItStored(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "finish-stored-state", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	failed := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if got, err := b.st.FinishAttemptAs(ctx, failed.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil || got != store.AttemptFailed {
		t.Fatalf("a failure on a running job: stored %q, %v; want failed", got, err)
	}
	if got, err := b.st.FinishAttemptAs(ctx, failed.ID, store.AttemptOutcome{State: store.AttemptFailed}); !errors.Is(err, store.ErrStateConflict) || got != "" {
		t.Fatalf("an attempt no longer in flight: stored %q, %v; want none and ErrStateConflict", got, err)
	}
	winner := startAttempt(t, b, j.ID, "p2", store.RoleFailover)
	kept := startAttempt(t, b, j.ID, "p3", store.RoleHedge)
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: winner.ID, ReadVersion: winner.ReadVersion,
		Result: json.RawMessage(`{"ok":true}`), LatencyMS: 5})
	if err != nil || !won {
		t.Fatalf("set-up: win %v, %v", won, err)
	}
	got, err := b.st.FinishAttemptAs(ctx, kept.ID, store.AttemptOutcome{State: store.AttemptUnknown})
	if err != nil || got != store.AttemptLost {
		t.Fatalf("an unknown end of a loser kept after the win: stored %q, %v; want lost", got, err)
	}
	var state string
	if err := b.db.Pool.QueryRow(ctx, `SELECT state FROM attempts WHERE id = $1`, kept.ID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != got {
		t.Errorf("FinishAttemptAs said %q, the attempt is stored %q", got, state)
	}
}
