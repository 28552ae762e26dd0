package server_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// SPEC §17: on SIGTERM the tenant listener closes at once, whatever the
// maintenance leader's step-down waits for. The step-down (a DELETE of the
// lease row, bounded to a second) used to run before the listener closed, so
// for up to a second after the signal the replica kept accepting connections
// a load balancer had already been told not to send. Found by review.
func TestTenantListenerClosesWhileTheStepDownWaits(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv, err := server.New(context.Background(), newConfig(t, db, newFakeLLM(t).srv.URL, ""), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	stepDownEnded := make(chan struct{})
	server.OnStepDownEnd(srv, func() { close(stepDownEnded) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()

	// This replica leads (New takes the lease before it returns).
	for {
		h, err := db.Store.Leader(context.Background(), "maintenance")
		if err != nil {
			t.Fatal(err)
		}
		if h == srv.Replica {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling the database: the lease has no other sign
	}
	// Another session holds the lease row until the listener has been seen
	// closed. FOR KEY SHARE blocks the step-down's DELETE but not a renewal's
	// UPDATE (which changes no key column): a renewal in flight when the
	// step-down starts would otherwise be held here too, and the step-down,
	// which waits for it, would send no DELETE to observe.
	tx, err := db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var holder int
	if err := tx.QueryRow(context.Background(),
		`SELECT pg_backend_pid() FROM leader_leases WHERE name = 'maintenance' AND holder = $1 FOR KEY SHARE`, srv.Replica).Scan(&holder); err != nil {
		t.Fatal(err)
	}

	sigterm()
	// The step-down's DELETE waits for the held row.
	var stepDown int
	for {
		err := db.Pool.QueryRow(context.Background(), `
			SELECT pid FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM leader_leases%'`,
			holder).Scan(&stepDown)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // polling PostgreSQL, the only place the wait shows
	}
	// The tenant listener refuses connections while the step-down still waits.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(time.Millisecond) // polling the listener: its closing has no other sign
	}
	select {
	case <-stepDownEnded:
		t.Fatal("the tenant listener accepted connections until the maintenance lease's step-down had given up: it must close at once on shutdown")
	default:
	}
	var waiting bool
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1 AND $2 = ANY(pg_blocking_pids(pid)))`,
		stepDown, holder).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if !waiting {
		t.Fatal("the step-down's DELETE no longer waits for the held lease row when the tenant listener closes")
	}

	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("ServeListeners: %v", err)
	}
	<-stepDownEnded
}
