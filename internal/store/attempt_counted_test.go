package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// CreateAttemptCounted says how many of the round's attempts count against
// max_attempts with the one it created — the count the limit is checked
// against, attempts never sent excluded — so that the race knows when the
// limit is spent without asking again (and waits for no retry or breaker
// the limit refuses).
func TestCreateAttemptCountedSaysTheRoundsCount(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "counted", true) // its first attempt, created with it, counts: 1
	fail := func(id string) {
		t.Helper()
		if err := b.st.FinishAttempt(ctx, id, store.AttemptOutcome{State: store.AttemptFailed,
			Error: map[string]any{"kind": "unavailable", "fault": "provider", "message": "503"}}); err != nil {
			t.Fatal(err)
		}
	}
	fail(j.Attempts[0].ID)
	na := store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RoleRetry, LeaseOwner: "replica-a", LeaseFor: time.Hour,
		Orchestrator: "replica-a", MaxAttempts: 3}
	a, made, err := b.st.CreateAttemptCounted(ctx, na)
	if err != nil || made != 2 {
		t.Fatalf("second attempt: made %d, err %v: want 2, created", made, err)
	}
	if err := b.st.RecordNotSent(ctx, a.ID, "the request was never sent: test"); err != nil {
		t.Fatal(err)
	}
	a, made, err = b.st.CreateAttemptCounted(ctx, na)
	if err != nil || made != 2 {
		t.Fatalf("attempt after one never sent: made %d, err %v: want 2 (the unsent one not counted), created", made, err)
	}
	fail(a.ID)
	a, made, err = b.st.CreateAttemptCounted(ctx, na)
	if err != nil || made != 3 {
		t.Fatalf("third counted attempt: made %d, err %v: want 3, created", made, err)
	}
	fail(a.ID)
	_, made, err = b.st.CreateAttemptCounted(ctx, na)
	if !errors.Is(err, store.ErrAttemptLimit) || made != 0 || err.Error() != store.AttemptLimitError(3, 3).Error() {
		t.Fatalf("attempt past max_attempts 3: made %d, err %v: want 0 and %v", made, err, store.AttemptLimitError(3, 3))
	}
}
