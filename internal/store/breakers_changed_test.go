package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A breaker that re-opened (open -> half-open -> open) between two
// publications is published open again, with Changed: its changed_at is the
// new opening, not the old "open since". Without Changed, a publication of the
// same state keeps changed_at.
func TestBreakerReopenedBetweenPublicationsGetsANewChangedAt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	publish := func(st store.BreakerState) store.BreakerState {
		t.Helper()
		st.Provider = "p1"
		if err := b.st.UpsertBreakerStates(ctx, "r1", []store.BreakerState{st}); err != nil {
			t.Fatal(err)
		}
		list, err := b.st.ListBreakerStates(ctx, time.Minute)
		if err != nil || len(list) != 1 {
			t.Fatalf("list %+v: %v", list, err)
		}
		return list[0]
	}
	publish(store.BreakerState{State: "open", Changed: true})
	// The first opening, an hour ago on the database clock.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE breaker_states SET changed_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	old := publish(store.BreakerState{State: "open"}).ChangedAt
	if again := publish(store.BreakerState{State: "open"}); !again.ChangedAt.Equal(old) {
		t.Fatalf("an unchanged open breaker's changed_at moved: %v -> %v", old, again.ChangedAt)
	}
	reopened := publish(store.BreakerState{State: "open", Changed: true})
	if !reopened.ChangedAt.After(old) {
		t.Fatalf("a re-opened breaker still shows open since %v (the first opening); want the re-opening", reopened.ChangedAt)
	}
}
