package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// An unknown attempt's finished_at is when it went unknown (its call's
// end): cancelling the job settles it as cancelled but used to overwrite
// that time with the cancellation's, so its latency grew by however long it
// waited for a decision. The win keeps it (settleSiblingsSQL); so does a
// cancellation now. An attempt still in flight gets the cancellation's time.
func TestCancelKeepsAnUnknownAttemptsEndTime(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancel-unknown-finished", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	unknown := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, unknown.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	// The call ended an hour ago (moved back rather than waited for).
	var ended time.Time
	if err := b.db.Pool.QueryRow(ctx, `UPDATE attempts SET finished_at = now() - interval '1 hour' WHERE id = $1 RETURNING finished_at`,
		unknown.ID).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	var state string
	var finished time.Time
	if err := b.db.Pool.QueryRow(ctx, `SELECT state, finished_at FROM attempts WHERE id = $1`, unknown.ID).Scan(&state, &finished); err != nil {
		t.Fatal(err)
	}
	if state != "cancelled" || !finished.Equal(ended) {
		t.Errorf("after the cancellation the unknown attempt is %s, finished at %s; want cancelled, still finished at %s (when it went unknown)",
			state, finished, ended)
	}
}
