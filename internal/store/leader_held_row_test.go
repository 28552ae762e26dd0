package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A leader lease row another session holds (an operator's transaction left
// open on it) is waited for briefly, within the caller's deadline, and then
// reported as held — ErrLeaseRowHeld, naming the row and how to find the
// session — by the renewal and by the resignation alike. The database
// answered: the renewal keeps the lease's connection, as it does after any
// other answer, rather than dialling a new one at every tick.
func TestLeaseCallsOnAHeldRowSaySoAndKeepTheConnection(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, _ := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	ctx := context.Background()
	const ttl = 3 * time.Second
	if ok, err := st.TryLead(ctx, "maintenance", "replica-a", ttl); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	c := st.LeaseConn()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE leader_leases SET expires_at = expires_at WHERE name = 'maintenance'`); err != nil {
		t.Fatal(err)
	}

	// As the elector calls them: a third of the lease each.
	rctx, cancel := context.WithTimeout(ctx, ttl/3)
	ok, err := st.TryLead(rctx, "maintenance", "replica-a", ttl)
	cancel()
	if ok || !errors.Is(err, store.ErrLeaseRowHeld) {
		t.Fatalf("renewal while another session holds the row: led %v, err %v; want ErrLeaseRowHeld", ok, err)
	}
	for _, want := range []string{"leader_leases, name = 'maintenance'", "pg_stat_activity", "pg_locks"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the renewal's error does not say %q: %v", want, err)
		}
	}
	if c.IsClosed() || st.LeaseConn() != c {
		t.Errorf("the renewal closed the lease's connection (closed %v, replaced %v), though the database answered", c.IsClosed(), st.LeaseConn() != c)
	}

	rctx, cancel = context.WithTimeout(ctx, ttl/3)
	err = st.Resign(rctx, "maintenance", "replica-a")
	cancel()
	if !errors.Is(err, store.ErrLeaseRowHeld) {
		t.Fatalf("resignation while another session holds the row: %v; want ErrLeaseRowHeld", err)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Resign(ctx, "maintenance", "replica-a"); err != nil {
		t.Fatalf("resignation once the row is free: %v", err)
	}
	if h, err := db.Store.Leader(ctx, "maintenance"); err != nil || h != "" {
		t.Fatalf("leader after Resign: %q (%v), want none", h, err)
	}
}
