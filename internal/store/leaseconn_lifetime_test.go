package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// eventually polls cond until it holds, failing the test once bound has
// passed without it (a bound on a hang, not a measure).
func eventually(t *testing.T, bound time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", bound, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Closing a Store's pool closes the leader lease's connection too, with no
// further lease call to notice it: an elector that stopped without
// resigning (or a test that never resigned) leaves no session behind.
func TestLeaseConnClosedWithItsPool(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if _, err := st.TryLead(context.Background(), "review", "r1", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c := st.LeaseConn()
	if c == nil {
		t.Fatal("no lease connection open after TryLead")
	}
	pool.Close()
	eventually(t, 15*time.Second, func() bool { return backends(t, db, app) == 0 },
		"the lease connection is still open after its pool was closed")
	if st.LeaseConn() != nil {
		t.Fatal("the lease connection is still held after its pool was closed")
	}
}

// A lease call on a Store whose pool is closed is refused, and dials
// nothing: neither after the lease connection was closed with the pool, nor
// on a pool closed before any lease call.
func TestLeaseCallOnClosedPoolIsRefused(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()

	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if ok, err := st.TryLead(ctx, "review", "r1", 30*time.Second); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	pool.Close()
	if _, err := st.TryLead(ctx, "review", "r1", 30*time.Second); !errors.Is(err, store.ErrPoolClosed) {
		t.Fatalf("TryLead on a closed pool (lease connection kept): %v, want ErrPoolClosed", err)
	}
	// The kept connection is closed by the refusal; its session ends soon
	// after (the server's backend exits), and no other is opened.
	eventually(t, 15*time.Second, func() bool { return backends(t, db, app) == 0 },
		"a session is still open after a refused call on a closed pool")
	if _, err := st.TryLead(ctx, "review", "r1", 30*time.Second); !errors.Is(err, store.ErrPoolClosed) {
		t.Fatalf("TryLead again on the closed pool: %v, want ErrPoolClosed", err)
	}
	if err := st.Resign(ctx, "review", "r1"); !errors.Is(err, store.ErrPoolClosed) {
		t.Fatalf("Resign on the closed pool: %v, want ErrPoolClosed", err)
	}

	fresh, app2 := leasePool(t, db, 2)
	st2 := store.New(fresh, store.Options{})
	fresh.Close()
	if _, err := st2.TryLead(ctx, "review2", "r1", 30*time.Second); !errors.Is(err, store.ErrPoolClosed) {
		t.Fatalf("first TryLead on a closed pool: %v, want ErrPoolClosed", err)
	}
	if st2.LeaseConn() != nil {
		t.Fatal("a refused first call on a closed pool left a lease connection open")
	}
	eventually(t, 15*time.Second, func() bool { return backends(t, db, app2) == 0 },
		"a refused first call on a closed pool left a session open")
	if h, err := db.Store.Leader(ctx, "review2"); err != nil || h != "" {
		t.Fatalf("leader of review2 after refused calls: %q (%v), want none", h, err)
	}
}

// An unused lease connection is closed once the lease's own ttl has passed
// (renewals come every third of it: a whole ttl unused means the elector
// stopped), not after a fixed minute.
func TestLeaseConnClosedAfterItsTTLUnused(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, _ := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if ok, err := st.TryLead(context.Background(), "review", "r1", 2*time.Second); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	c := st.LeaseConn()
	if c == nil {
		t.Fatal("no lease connection open after TryLead")
	}
	pid := c.PgConn().PID()
	eventually(t, 20*time.Second, func() bool { return st.LeaseConn() == nil && session(t, db, pid) == 0 },
		"the lease connection, unused for ten times the lease's ttl, is still open")
	if ok, err := st.TryLead(context.Background(), "review", "r1", 2*time.Second); err != nil || !ok {
		t.Fatalf("TryLead after the idle close: %v %v", ok, err)
	}
}

// session is how many sessions the database has open with backend pid.
func session(t *testing.T, db *testdb.DB, pid uint32) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, int64(pid)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
