package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A breaker that left its published state and came back to it between two
// publications (here closed -> open -> half-open -> closed, none of it
// published: coalesced wake-ups or failed publications) is published with the
// time it came back, not the time it first entered that state. Closed is the
// state the test can hold still; a re-opening goes the same way.
func TestPublisherShowsAReturnToTheSameStateAsANewChange(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	set, changes := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, HalfOpenProbes: 1})
	defer set.Close()
	pub := breaker.NewPublisher(set, db.Store, breaker.PublisherOptions{Replica: "r1"})
	changedAt := func() time.Time {
		t.Helper()
		list, err := db.Store.ListBreakerStates(ctx, time.Minute)
		if err != nil || len(list) != 1 || list[0].State != breaker.StateClosed {
			t.Fatalf("published %+v: %v", list, err)
		}
		return list[0].ChangedAt
	}
	if err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	// Closed since an hour ago on the database clock.
	if _, err := db.Pool.Exec(ctx, `UPDATE breaker_states SET changed_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	old := changedAt()
	if err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if again := changedAt(); !again.Equal(old) {
		t.Fatalf("republishing an unchanged breaker moved changed_at: %v -> %v", old, again)
	}

	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	admit(t, set)(race.OutcomeSuccess)
	waitChange(t, changes, "p", breaker.StateClosed)
	if err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if now := changedAt(); !now.After(old) {
		t.Fatalf("closed again after an opening, the row still says closed since %v (before the opening)", now)
	}
}
