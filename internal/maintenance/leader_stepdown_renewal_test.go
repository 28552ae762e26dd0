package maintenance_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// awaitLockWaiter waits until a statement whose text contains marker waits
// for a lock that backend holder holds (polled; a hang guard, not a timing
// assertion, fails the test after a minute).
func awaitLockWaiter(t *testing.T, pool *pgxpool.Pool, holder int, marker string) {
	t.Helper()
	ctx := context.Background()
	for guard := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid)) AND strpos(query, $2) > 0)`,
			holder, marker).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("no statement with %q ever waited for the locks of backend %d", marker, holder)
		}
	}
}

// A renewal in flight when the replica steps down — here it waits on the
// lease row, which another session holds — used to outlast StepDown (the
// server gives it a second): StepDown returned its context's error without
// resigning, the renewal then committed a whole new lease, and nothing
// resigned until Close, after the drain, so no replica led (and adopted the
// jobs this one handed over) for up to the lease. The renewal now resigns as
// it ends when it finds the replica stepped down. Found in review.
func TestRenewalInFlightDuringStepDownResignsAsItEnds(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	// A lease long enough that the renewal's own bound (a third of it) does
	// not end its wait on the held row before the test releases it.
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", 3*time.Minute, nil)
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", 3*time.Minute, nil)
	if !a.Once(ctx) {
		t.Fatal("the first replica did not become leader")
	}

	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var holder int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if tag, err := tx.Exec(ctx, `SELECT 1 FROM leader_leases WHERE name = 'maintenance' FOR UPDATE`); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("hold the lease row: %v (%d rows)", err, tag.RowsAffected())
	}

	renewed := make(chan bool, 1)
	go func() { renewed <- a.Once(ctx) }() // Run's renewal, on its tick
	awaitLockWaiter(t, db.Pool, holder, "INSERT INTO leader_leases")

	// The step-down's context ends while the renewal still waits (an
	// already expired one: the server's second, run out).
	sctx, cancel := context.WithDeadline(ctx, time.Time{})
	err = a.StepDown(sctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StepDown with a renewal in flight and its context ended: %v, want its deadline error", err)
	}
	select {
	case <-renewed:
		t.Fatal("the renewal ended while the lease row was still held")
	default:
	}
	if a.IsLeader() {
		t.Fatal("a replica that stepped down still says it leads")
	}

	if err := tx.Rollback(ctx); err != nil { // the renewal goes through now
		t.Fatal(err)
	}
	led := <-renewed
	if h, err := db.Store.Leader(ctx, "maintenance"); err != nil || h == "replica-a" {
		t.Fatalf("after the step-down and the renewal in flight: lease held by %q (%v); the stepped-down replica must not hold it", h, err)
	}
	if led || a.IsLeader() {
		t.Fatalf("a renewal that ended after the step-down: Once %v, IsLeader %v; want the replica not to lead", led, a.IsLeader())
	}
	if !b.Once(ctx) {
		t.Fatal("another replica could not lead after the leader stepped down")
	}
	if a.Once(ctx) {
		t.Fatal("the stepped-down replica took the lease again")
	}
	if h, err := db.Store.Leader(ctx, "maintenance"); err != nil || h != "replica-b" {
		t.Fatalf("leader: %q (%v), want replica-b", h, err)
	}
}

// A step-down whose resignation fails — here it goes out on a connection
// gone silent, and gets no answer — is tried again by the renewal loop's next
// try (Once, on Run's tick), on another connection, rather than left to the
// lease's expiry, and not again once it has succeeded.
func TestFailedResignationIsTriedAgain(t *testing.T) {
	r := newSilentRig(t, store.Options{})
	st := &countingLeases{LeaseStore: r.st}
	e := maintenance.NewElector(st, "maintenance", "replica-a", 3*time.Second, nil) // a try is given up after a second
	ctx := context.Background()
	if !e.Once(ctx) {
		t.Fatal("the replica did not become leader")
	}
	r.goSilent(t)
	if err := stepDown(t, e); err == nil {
		t.Fatal("a failed resignation reported success")
	}
	if n := r.leases(t); n != 1 {
		t.Fatalf("%d lease rows after a resignation that never reached the database, want 1", n)
	}
	r.connect(t) // the next try's connection
	if e.Once(ctx) {
		t.Fatal("a replica that stepped down took the lease again")
	}
	if n := r.leases(t); n != 0 {
		t.Fatalf("%d lease rows after the next try: the failed resignation was not tried again", n)
	}
	calls := st.calls.Load()
	if e.Once(ctx) || e.StepDown(ctx) != nil {
		t.Fatal("after the resignation succeeded, a try led or a step-down failed")
	}
	if n := st.calls.Load() - calls; n != 0 {
		t.Fatalf("after the resignation succeeded, a try and a step-down made %d lease calls, want none", n)
	}
}

// countingLeases counts the lease calls made through it (they go out on the
// lease's own connection, not the pool, whose counters do not see them).
type countingLeases struct {
	maintenance.LeaseStore
	calls atomic.Int64
}

func (c *countingLeases) TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	c.calls.Add(1)
	return c.LeaseStore.TryLead(ctx, name, holder, ttl)
}

func (c *countingLeases) Resign(ctx context.Context, name, holder string) error {
	c.calls.Add(1)
	return c.LeaseStore.Resign(ctx, name, holder)
}
