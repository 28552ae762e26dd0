package store_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// leasePool is a pool on db (at most max connections, none kept warm) whose
// connections — and the lease connection dialled from its configuration —
// carry an application_name of their own, returned with it.
func leasePool(t *testing.T, db *testdb.DB, max int32) (*pgxpool.Pool, string) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	app := "lease_" + strings.ToLower(rand.Text()[:10])
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	store.ConfigurePool(cfg)
	cfg.MaxConns, cfg.MinConns = max, 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, app
}

// backends is how many sessions the database has open for application app.
func backends(t *testing.T, db *testdb.DB, app string) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// holdPool takes every connection of pool until t ends.
func holdPool(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release)
	}
}

// The leader lease goes out on one connection of its own, beside the pool:
// with every pooled connection taken, concurrent lease calls still get their
// answers, all on that one connection (one session beyond the pool's), and
// Resign closes it.
func TestLeaseUsesOneConnectionOfItsOwn(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, app := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	holdPool(t, pool)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bounds a hang only
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			if _, err := st.TryLead(ctx, "maintenance", fmt.Sprintf("replica-%d", i), time.Minute); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a lease call with the pool busy: %v", err)
	}
	c := st.LeaseConn()
	if c == nil {
		t.Fatal("no lease connection open after the lease calls")
	}
	if n := backends(t, db, app); n != 3 {
		t.Fatalf("%d sessions open for a pool of 2 (all taken) and the lease, want 3: one connection for the lease", n)
	}
	h, err := db.Store.Leader(ctx, "maintenance")
	if err != nil || h == "" {
		t.Fatalf("leader after the calls: %q (%v)", h, err)
	}
	if err := st.Resign(ctx, "maintenance", h); err != nil {
		t.Fatal(err)
	}
	if !c.IsClosed() || st.LeaseConn() != nil {
		t.Fatalf("after Resign the lease connection is open (closed %v, still held %v)", c.IsClosed(), st.LeaseConn() != nil)
	}
	if h, err := db.Store.Leader(ctx, "maintenance"); err != nil || h != "" {
		t.Fatalf("leader after Resign: %q (%v), want none", h, err)
	}
}

// An unused lease connection is closed (its idle timer) and the next call
// dials another.
func TestIdleLeaseConnectionIsClosed(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, _ := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	ctx := context.Background()
	if ok, err := st.TryLead(ctx, "maintenance", "replica-a", time.Minute); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	c := st.LeaseConn()
	if c == nil {
		t.Fatal("no lease connection open after TryLead")
	}
	st.CloseIdleLeaseConn()
	if !c.IsClosed() || st.LeaseConn() != nil {
		t.Fatal("the idle lease connection was not closed")
	}
	if ok, err := st.TryLead(ctx, "maintenance", "replica-a", time.Minute); err != nil || !ok {
		t.Fatalf("TryLead after the idle close: %v %v", ok, err)
	}
	if st.LeaseConn() == nil || st.LeaseConn() == c {
		t.Fatal("no new lease connection after the idle close")
	}
	if err := st.Resign(ctx, "maintenance", "replica-a"); err != nil {
		t.Fatal(err)
	}
}

// A kept lease connection that died while unused (here an administrator
// ends its session; a restart or a failover alike) costs no renewal: the
// call is made again at once on a new connection, as the pool does for its
// own connections after their liveness ping.
func TestLeaseReconnectsWhenItsConnectionDied(t *testing.T) {
	db := testdb.New(t, store.Options{})
	pool, _ := leasePool(t, db, 2)
	st := store.New(pool, store.Options{})
	ctx := context.Background()
	if ok, err := st.TryLead(ctx, "maintenance", "replica-a", time.Minute); err != nil || !ok {
		t.Fatalf("TryLead: %v %v", ok, err)
	}
	c := st.LeaseConn()
	var ended bool
	if err := db.Pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, c.PgConn().PID()).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the lease's session: %v %v", ended, err)
	}
	if ok, err := st.TryLead(ctx, "maintenance", "replica-a", time.Minute); err != nil || !ok {
		t.Fatalf("renewal after the lease's connection died: led %v, err %v; want it made again on a new connection", ok, err)
	}
	if !c.IsClosed() || st.LeaseConn() == nil || st.LeaseConn() == c {
		t.Fatal("the dead lease connection was not replaced")
	}
	if err := st.Resign(ctx, "maintenance", "replica-a"); err != nil {
		t.Fatal(err)
	}
}
