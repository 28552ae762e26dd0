package metrics_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// router_db_pool_acquire_wait_seconds_total is the time acquisitions waited
// because the pool had no idle connection (pgxpool's EmptyAcquireWaitTime),
// as its name and help say — not the time of every acquisition
// (AcquireDuration), which grows with acquisitions that found a connection
// idle and waited for nothing.
func TestPoolAcquireWaitIsTheEmptyPoolsWait(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	pool, err := store.Connect(ctx, db.URL, func(c *pgxpool.Config) { c.MinConns, c.MaxConns = 0, 1 })
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for range 200 { // the first opens the connection; the others find it idle
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	m := metrics.New(metrics.Options{Pool: pool, NoProcessCollectors: true})
	fams := scrape(t, m.Handler())
	s := pool.Stat()
	got := value(t, fams, "router_db_pool_acquire_wait_seconds_total", nil)
	if got != s.EmptyAcquireWaitTime().Seconds() {
		t.Fatalf("acquire wait %v s; want the empty pool's wait %v s (every acquisition's time is %v s)",
			got, s.EmptyAcquireWaitTime().Seconds(), s.AcquireDuration().Seconds())
	}
	if s.AcquireDuration() == s.EmptyAcquireWaitTime() {
		t.Fatalf("set-up: the idle acquisitions took no time (%v): the test cannot tell the two apart", s.AcquireDuration())
	}
}
