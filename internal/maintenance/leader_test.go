package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// One leader at a time; when it stops renewing, another replica takes over as
// soon as the lease expires on the database clock; a resigning leader hands
// over at once.
func TestOneLeaderAndTakeover(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", time.Minute, nil)
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", time.Minute, nil)
	if !a.Once(ctx) || !a.IsLeader() {
		t.Fatal("the first replica did not become leader")
	}
	if b.Once(ctx) || b.IsLeader() {
		t.Fatal("a second replica became leader while the first holds the lease")
	}
	if !a.Once(ctx) {
		t.Fatal("the leader could not renew")
	}
	// a dies: it renews no more. Let its lease run out on the database clock.
	if _, err := db.Pool.Exec(ctx, `UPDATE leader_leases SET expires_at = now() - interval '1 millisecond'`); err != nil {
		t.Fatal(err)
	}
	if !b.Once(ctx) || !b.IsLeader() {
		t.Fatal("the second replica did not take over an expired lease")
	}
	if a.Once(ctx) || a.IsLeader() {
		t.Fatal("the old leader still leads after the takeover")
	}
	// b stops cleanly: Run resigns when its context ends.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Run(runCtx) }()
	cancel()
	<-done
	if b.IsLeader() {
		t.Fatal("a stopped elector still says it leads")
	}
	if !a.Once(ctx) {
		t.Fatal("after the leader resigned, another replica could not lead at once")
	}
}

// SPEC §17, docs/operations.md (shutdown, step 5): a draining replica hands
// its unfinished jobs over, and another replica's recovery adopts them on its
// next pass. Recovery runs on the leader only, so a leader that drains must
// give the lease up at once — not when its drain has ended — and must not
// take it back while its renewal loop still runs.
func TestSteppingDownHandsTheLeadOverAtOnce(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", time.Minute, nil)
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", time.Minute, nil)
	if !a.Once(ctx) {
		t.Fatal("the first replica did not become leader")
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); a.Run(runCtx) }() // a keeps renewing while it drains
	if err := a.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if a.IsLeader() {
		t.Fatal("a replica that stepped down still says it leads")
	}
	if !b.Once(ctx) || !b.IsLeader() {
		t.Fatal("another replica could not lead at once after the leader stepped down")
	}
	if a.Once(ctx) || a.IsLeader() {
		t.Fatal("a replica that stepped down took the lease again")
	}
	cancel()
	<-done
	if h, err := db.Store.Leader(ctx, "maintenance"); err != nil || h != "replica-b" {
		t.Fatalf("leader after the old leader stopped: %q %v, want replica-b", h, err)
	}
	if err := a.StepDown(ctx); err != nil {
		t.Fatalf("stepping down twice: %v", err)
	}
	if h, _ := db.Store.Leader(ctx, "maintenance"); h != "replica-b" {
		t.Fatalf("a second step-down took the lease from the new leader: %q", h)
	}
}
