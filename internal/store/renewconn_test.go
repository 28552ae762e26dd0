package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// inFlight creates a running job whose lease replica-a holds, its first
// attempt in flight, and returns the job's id and the attempt's.
func inFlight(t *testing.T, b *bundle, key string) (jobID, attemptID string) {
	t.Helper()
	j := leasedJob(t, b, key, true)
	return j.ID, j.Attempts[0].ID
}

// The job and attempt leases are renewed on a connection of their own, as
// the leader lease is: with every pooled connection taken by the replica's
// own work, and the leader lease's connection in use, a renewal still gets
// its answer (it used to wait in the pool's queue until its deadline, and a
// live replica's leases lapsed). The connection is kept for the next tick;
// Close closes it and refuses later renewals.
func TestRenewLeasesGoesOutOnAConnectionOfItsOwn(t *testing.T) {
	b := setup(t)
	jobID, attemptID := inFlight(t, b, "renew-own-conn")
	pool, app := leasePool(t, b.db, 2)
	st := store.New(pool, store.Options{})
	defer st.Close()
	holdPool(t, pool)
	releaseLeader := st.HoldLeaderLeaseConn()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound on a hang
	defer cancel()
	renewed, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour)
	releaseLeader()
	if err != nil {
		t.Fatalf("RenewLeases with every pooled connection taken and a leader lease call under way: %v; want it made on a connection of its own", err)
	}
	if want := []store.RenewedAttempt{{JobID: jobID, AttemptID: attemptID}}; !slices.Equal(renewed.Attempts, want) {
		t.Fatalf("renewed %v, want %v", renewed, want)
	}
	c := st.RenewConn()
	if c == nil {
		t.Fatal("the renewal's connection was not kept for the next tick")
	}
	if n := backends(t, b.db, app); n != 3 {
		t.Fatalf("%d sessions for the replica, want 3: its pool's 2 and the renewal's", n)
	}
	st.Close()
	if !c.IsClosed() || st.RenewConn() != nil {
		t.Fatalf("after Close the renewal's connection is open (closed %v, still held %v)", c.IsClosed(), st.RenewConn() != nil)
	}
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); !errors.Is(err, store.ErrStoreClosed) {
		t.Fatalf("RenewLeases after Close: %v, want ErrStoreClosed", err)
	}
}

// A renewal that failed inside its transaction (the database refused the
// update) does not leave its kept connection in that failed transaction:
// the next tick's renewal would be refused too ("current transaction is
// aborted"), and every one after it, until the replica's leases lapsed. The
// connection is closed, and the next renewal dials another.
func TestRenewalFailedInItsTransactionDoesNotSpoilTheNext(t *testing.T) {
	b := setup(t)
	jobID, _ := inFlight(t, b, "renew-failed-tx")
	pool, _ := leasePool(t, b.db, 2)
	st := store.New(pool, store.Options{})
	defer st.Close()
	ctx := context.Background()
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	// The session now refuses writes (as a server demoted to a standby
	// would): the renewal's update fails after its BEGIN.
	if _, err := st.RenewConn().Exec(ctx, `SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); err == nil {
		t.Fatal("a renewal on a read-only session succeeded: the test did not set up its case")
	}
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); err != nil {
		t.Fatalf("the renewal after one that failed in its transaction: %v; want it made on a new connection", err)
	}
}

// A kept renewal connection that died while unused (a restart, a failover,
// an ended session) is replaced within the same renewal, which is sent again
// on the new connection (a new batch: a sent one is tied to its connection's
// prepared statements).
func TestRenewalReconnectsWhenItsConnectionDied(t *testing.T) {
	b := setup(t)
	jobID, attemptID := inFlight(t, b, "renew-reconnect")
	pool, _ := leasePool(t, b.db, 2)
	st := store.New(pool, store.Options{})
	defer st.Close()
	ctx := context.Background()
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	c := st.RenewConn()
	var ended bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, c.PgConn().PID()).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the renewal's session: %v %v", ended, err)
	}
	renewed, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour)
	if err != nil {
		t.Fatalf("renewal after its connection died: %v; want it made again on a new connection", err)
	}
	if want := []store.RenewedAttempt{{JobID: jobID, AttemptID: attemptID}}; !slices.Equal(renewed.Attempts, want) {
		t.Fatalf("renewed %v, want %v", renewed, want)
	}
	if !c.IsClosed() || st.RenewConn() == nil || st.RenewConn() == c {
		t.Fatal("the dead renewal connection was not replaced")
	}
}
