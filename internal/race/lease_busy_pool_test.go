package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A live replica's job and attempt leases are renewed while its own work
// holds every connection of its pool (a burst, slow reads, statements queued
// on a held row): the renewal has a connection of its own, as the leader
// lease does (store/leaseconn.go). It used to go out on the pool
// (s.pool.SendBatch): each renewal spent its one-tick budget in the pool's
// queue and gave up; after three ticks the leases lapsed, and the
// maintenance leader (another replica) marked the live attempts unknown
// (SPEC §6.8 is for a router that died) and settled their jobs `unknown`
// while their calls were in flight. Found by review (rrecov8).
func TestLeasesOfALiveReplicaLapseWhileItsPoolIsBusy(t *testing.T) {
	db := testdb.New(t, store.Options{})
	started := make(chan struct{}, 1)
	answer := make(chan struct{})
	rb := racetest.New(t, racetest.Options{
		DB: db,
		Providers: []racetest.Provider{{Name: "primary", Timeout: time.Minute,
			OnCall: func(int, *providers.Request) {
				select {
				case started <- struct{}{}:
				default:
				}
			},
			Respond: func(int, *providers.Request) providers.Step {
				<-answer
				return providers.Step{Output: racetest.ValidTriage}
			}}},
		Lease: 600 * time.Millisecond, // a tick every 200ms
	})
	ctx := context.Background()
	// Replica B: another process on the same database, with its own pool.
	poolB, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer poolB.Close()
	storeB := store.New(poolB, store.Options{})
	defer storeB.Close()

	job := rb.Submit(t)
	<-started
	leaseOf := func() (at time.Time, expired bool) {
		t.Helper()
		if err := poolB.QueryRow(ctx, `SELECT lease_expires_at, lease_expires_at < now() FROM attempts WHERE job_id = $1`,
			job.ID).Scan(&at, &expired); err != nil {
			t.Fatal(err)
		}
		return at, expired
	}
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	// The claim leased the attempt for 30s; wait for the keeper's first
	// renewal (now + 600ms), so that the lease is the runner's.
	first, _ := leaseOf()
	deadline := time.Now().Add(20 * time.Second)
	var held time.Time
	for {
		if at, _ := leaseOf(); !at.Equal(first) {
			held = at
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper never renewed the attempt's lease")
		}
		<-poll.C
	}

	// Replica A's work holds every connection of its pool.
	var conns []*pgxpool.Conn
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	for range db.Pool.Config().MaxConns {
		c, err := db.Pool.Acquire(actx)
		if err != nil {
			cancel()
			t.Fatalf("acquire: %v", err)
		}
		conns = append(conns, c)
	}
	cancel()
	// The lease as the pool became busy: a renewal that got a pooled
	// connection before the test had them all has committed by now.
	held, _ = leaseOf()
	releasePool := func() {
		for _, c := range conns {
			c.Release()
		}
		conns = nil
	}
	defer releasePool()

	// Either the keeper renews the live attempt's lease meanwhile (it is
	// alive), or the lease runs out on the database's clock.
	for {
		at, expired := leaseOf()
		if at.After(held) {
			// Renewed while the pool was busy: the replica's liveness does
			// not depend on its pool.
			releasePool()
			close(answer)
			return
		}
		if expired {
			break
		}
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("neither renewed nor expired")
		}
		<-poll.C
	}
	// The maintenance leader (B) takes the live call for a dead router's:
	// the attempt becomes unknown, and the job with it (counted in
	// router_jobs_settled_total{state="unknown"}, a job.unknown event for an
	// owner with a webhook, SPEC §16), while replica A is alive and its
	// provider call in flight.
	unknown, err := storeB.ExpireAttemptLeases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var state, attemptState string
	if err := poolB.QueryRow(ctx, `SELECT j.state, a.state FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE j.id = $1`,
		job.ID).Scan(&state, &attemptState); err != nil {
		t.Fatal(err)
	}
	releasePool()
	close(answer) // the provider answers the live call
	rb.Stop()
	t.Errorf("replica A was alive, its call in flight, but its pool was busy for a lease: its keeper's renewals waited "+
		"for a pooled connection and gave up, the attempt's lease lapsed, and replica B's recovery (jobs %v) made the "+
		"live attempt %q and its job %q", unknown, attemptState, state)
}
