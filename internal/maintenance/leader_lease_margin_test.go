package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// fakeClock is a local clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// A leader stops leading before its lease can have expired in the database,
// so that it never leads together with the replica that takes the lease
// over: the lease runs for ttl from the renewal's commit, later than the
// renewal was sent, and this replica counts its lead from the sending, and
// ends it a little early. The local clock here moves only when the test
// moves it, and the database's lease is expired by hand, as ttl passing on
// its clock would.
func TestLeaderStopsLeadingBeforeItsLeaseExpires(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	const ttl = time.Minute
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	sent := clock.now()
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", ttl, nil)
	a.SetClock(clock.now)
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", ttl, nil)
	if !a.Once(ctx) {
		t.Fatal("a did not lead")
	}
	clock.set(sent.Add(ttl / 2))
	if !a.IsLeader() {
		t.Fatal("half a lease after its renewal was sent, a no longer leads")
	}
	clock.set(sent.Add(ttl - time.Millisecond))
	if a.IsLeader() {
		t.Fatal("a still leads a millisecond before its lease can have expired in the database: it must stop a little before, to leave a margin for the clocks' rates")
	}
	// ttl after the renewal was sent: the earliest the lease can have
	// expired in the database, and another replica taken it.
	clock.set(sent.Add(ttl))
	if _, err := db.Pool.Exec(ctx, `UPDATE leader_leases SET expires_at = now()`); err != nil {
		t.Fatal(err)
	}
	if !b.Once(ctx) {
		t.Fatal("b did not take the expired lease")
	}
	if a.IsLeader() {
		t.Fatal("split brain: a still says it leads a whole lease after its renewal was sent, and b has taken the lease")
	}
}
