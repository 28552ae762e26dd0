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

// Closing a Store closes the leader lease's connection at once, with no
// further lease call to notice it, and stops its idle timer (nothing of the
// Store is left to run); the pool, the caller's, stays open. Before, the
// lease's connection lived in a package-level map keyed by the pool, and a
// timer probed the pool every second to find it closed.
func TestStoreCloseClosesTheLeaseConn(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if _, err := st.TryLead(context.Background(), "review", "r1", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c := st.LeaseConn()
	if c == nil || !st.LeaseIdleTimerArmed() {
		t.Fatalf("after TryLead: lease connection open %v, idle timer armed %v; want both", c != nil, st.LeaseIdleTimerArmed())
	}
	pid := c.PgConn().PID()
	st.Close()
	if !c.IsClosed() || st.LeaseConn() != nil {
		t.Fatalf("after Close the lease connection is open (closed %v, still held %v)", c.IsClosed(), st.LeaseConn() != nil)
	}
	if st.LeaseIdleTimerArmed() {
		t.Fatal("after Close the lease connection's idle timer is still armed")
	}
	// The server's backend exits on the goodbye, a moment later.
	eventually(t, 15*time.Second, func() bool { return session(t, db, pid) == 0 },
		"the lease connection's session is still open after Close")
	if _, err := pool.Exec(context.Background(), `SELECT 1`); err != nil {
		t.Fatalf("the pool after the Store's Close: %v, want it open (the caller closes it)", err)
	}
	st.Close() // again: nothing to do
	pool.Close()
	eventually(t, 15*time.Second, func() bool { return backends(t, db, app) == 0 },
		"a session is still open after the Store and its pool were closed")
}

// A lease call on a closed Store is refused, says what to do, and dials
// nothing: neither after a lease connection was closed by Close, nor on a
// Store closed before any lease call.
func TestLeaseCallOnClosedStoreIsRefused(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()

	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if ok, err := st.TryLead(ctx, "review", "r1", 30*time.Second); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	st.Close()
	pool.Close()
	_, err := st.TryLead(ctx, "review", "r1", 30*time.Second)
	if !errors.Is(err, store.ErrStoreClosed) {
		t.Fatalf("TryLead on a closed Store: %v, want ErrStoreClosed", err)
	}
	if !strings.Contains(err.Error(), "Close was called") || !strings.Contains(err.Error(), "stop the leader elector") {
		t.Fatalf("TryLead on a closed Store: %q, want it to say the Store was closed and what to do", err)
	}
	eventually(t, 15*time.Second, func() bool { return backends(t, db, app) == 0 },
		"a session is still open after a refused call on a closed Store")
	if err := st.Resign(ctx, "review", "r1"); !errors.Is(err, store.ErrStoreClosed) {
		t.Fatalf("Resign on a closed Store: %v, want ErrStoreClosed", err)
	}
	if st.LeaseConn() != nil || backends(t, db, app) != 0 {
		t.Fatal("a refused call on a closed Store opened a connection")
	}

	fresh, app2 := leasePool(t, db, 2)
	st2 := store.New(fresh, store.Options{})
	st2.Close() // its pool still open: the refusal is the Store's
	if _, err := st2.TryLead(ctx, "review2", "r1", 30*time.Second); !errors.Is(err, store.ErrStoreClosed) {
		t.Fatalf("first TryLead on a closed Store: %v, want ErrStoreClosed", err)
	}
	if st2.LeaseConn() != nil || st2.LeaseIdleTimerArmed() {
		t.Fatal("a refused first call on a closed Store left a lease connection or its timer")
	}
	if n := backends(t, db, app2); n != 0 {
		t.Fatalf("a refused first call on a closed Store opened %d sessions", n)
	}
	if h, err := db.Store.Leader(ctx, "review2"); err != nil || h != "" {
		t.Fatalf("leader of review2 after refused calls: %q (%v), want none", h, err)
	}
}

// Close does not wait for a lease call in flight (here a renewal waiting on
// the lease row, which another session holds) nor cut it: the call gets its
// answer, and its connection is closed as it ends, not kept for a Store
// that makes no further call.
func TestStoreCloseDuringALeaseCall(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	if ok, err := st.TryLead(ctx, "review", "r1", 30*time.Second); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	pid := st.LeaseConn().PgConn().PID()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT FROM leader_leases WHERE name = 'review' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	renew, stop := context.WithTimeout(ctx, time.Minute) // bounds a hang only
	defer stop()
	done := testdb.RunAsync(t, stop, func() error {
		ok, err := st.TryLead(renew, "review", "r1", 30*time.Second)
		if err == nil && !ok {
			err = errors.New("the renewal in flight did not keep the lead")
		}
		return err
	})
	eventually(t, time.Minute, func() bool {
		var waiting bool
		if err := db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock')`,
			app).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting
	}, "the renewal never waited on the lease row")
	st.Close() // returns while the renewal still waits on the row
	select {
	case err := <-done:
		t.Fatalf("the renewal ended while the lease row was still locked: %v", err)
	default:
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the renewal in flight when Close was called: %v, want its answer", err)
	}
	if st.LeaseConn() != nil || st.LeaseIdleTimerArmed() {
		t.Fatalf("after the renewal that was in flight at Close: lease connection held %v, idle timer armed %v; want neither",
			st.LeaseConn() != nil, st.LeaseIdleTimerArmed())
	}
	eventually(t, 15*time.Second, func() bool { return session(t, db, pid) == 0 },
		"the lease connection of the call in flight at Close is still open after it ended")
	if _, err := st.TryLead(ctx, "review", "r1", 30*time.Second); !errors.Is(err, store.ErrStoreClosed) {
		t.Fatalf("TryLead after Close: %v, want ErrStoreClosed", err)
	}
}

// An unused lease connection is closed once the lease's own ttl has passed
// (renewals come every third of it: a whole ttl unused means the elector
// stopped), not after a fixed minute, with no Close; the idle timer is then
// disarmed, and the next call dials another.
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
	if st.LeaseIdleTimerArmed() {
		t.Fatal("the idle timer is still armed with no lease connection open")
	}
	if ok, err := st.TryLead(context.Background(), "review", "r1", 2*time.Second); err != nil || !ok {
		t.Fatalf("TryLead after the idle close: %v %v", ok, err)
	}
	st.Close()
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
