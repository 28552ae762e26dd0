package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// closed reports whether ch is closed (it is never sent on).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Gained signals each gain of the lead — not a renewal, not a failed try —
// so that work only the leader does (recovery adopting the jobs a draining
// leader hands over) starts as soon as this replica leads.
func TestGainedSignalsEachGainOfTheLead(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", time.Minute, nil)
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", time.Minute, nil)
	expire := func() {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, `UPDATE leader_leases SET expires_at = now() - interval '1 millisecond'`); err != nil {
			t.Fatal(err)
		}
	}

	ga, gb := a.Gained(), b.Gained()
	if closed(ga) {
		t.Fatal("Gained is closed before any try")
	}
	if !a.Once(ctx) {
		t.Fatal("replica-a could not lead")
	}
	if !closed(ga) {
		t.Fatal("Gained was not closed when replica-a gained the lead")
	}
	if b.Once(ctx) || closed(gb) {
		t.Fatal("a failed try closed Gained")
	}
	ga = a.Gained()
	if closed(ga) {
		t.Fatal("Gained after a gain is already closed")
	}
	if !a.Once(ctx) || closed(ga) {
		t.Fatal("a renewal closed Gained")
	}

	// replica-a stops renewing; replica-b takes the lease; replica-a takes
	// it back when replica-b's expires in turn: a gain again.
	expire()
	if !b.Once(ctx) || !closed(gb) {
		t.Fatal("Gained was not closed when replica-b took over an expired lease")
	}
	if a.Once(ctx) || closed(ga) {
		t.Fatal("losing the lead closed Gained")
	}
	expire()
	if !a.Once(ctx) || !closed(ga) {
		t.Fatal("Gained was not closed when replica-a led again")
	}

	// A replica that stepped down never gains the lead again.
	ga = a.Gained()
	if err := a.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Once(ctx) || closed(ga) {
		t.Fatal("a replica that stepped down gained the lead")
	}
}
