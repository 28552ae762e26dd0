package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Short liveness settings, so that a dead connection is found in well under a
// second; a healthy local round trip is far quicker than the timeout, and an
// early reconnection would only wake the waiter once more.
const (
	testCheckAfter = 100 * time.Millisecond
	testTimeout    = 500 * time.Millisecond
)

// silentListener is a listener whose connections to PostgreSQL go through a
// freezable proxy (its own pool; the rest of the test talks to the database
// directly), and a waiter subscribed to a job on it.
type silentListener struct {
	db     *testdb.DB
	proxy  *testdb.FreezableProxy
	pool   *pgxpool.Pool // the listener's, through the proxy
	jobID  string
	waiter <-chan string
}

func setupSilentListener(t *testing.T) *silentListener {
	t.Helper()
	db := testdb.New(t, store.Options{})
	proxy := testdb.StartProxy(t, db.URL)
	pool := proxy.Pool(t, db.URL) // the listener's own; closed when t ends, after the proxy

	l := store.NewListener(pool, slog.New(slog.NewTextHandler(t.Output(), nil))) // its warnings, with the test's output
	l.SetLiveness(testCheckAfter, testTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-l.Ready()

	s := &silentListener{db: db, proxy: proxy, pool: pool, jobID: uuid.NewString()}
	waiter, unsubscribe := l.Subscribe(s.jobID)
	t.Cleanup(unsubscribe)
	s.waiter = waiter

	// A notification reaches the waiter through the proxy. Once it has,
	// the wake-up that follows the first LISTEN is behind us too. A wake-up
	// still unread keeps its place over the notification (a waiter re-reads
	// the job then, which here is: it is announced once more).
	wait, cancelWait := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelWait()
	s.notify(t, store.JobRunning)
	for got := ""; got != store.JobRunning; {
		select {
		case got = <-waiter:
			if got == "" {
				s.notify(t, store.JobRunning)
			}
		case <-wait.Done():
			t.Fatal("a notification did not reach the waiter through the proxy")
		}
	}
	return s
}

// notify announces the job's new state to every replica, as a change
// committed by another replica does.
func (s *silentListener) notify(t *testing.T, state string) {
	t.Helper()
	if _, err := s.db.Pool.Exec(context.Background(), `SELECT pg_notify($1, $2)`,
		store.NotifyChannel, s.jobID+":"+state); err != nil {
		t.Fatal(err)
	}
}

// freezeAndAwaitWin freezes the listener's connection, announces the job's
// win (lost: the frozen connection carries nothing), and waits until the
// waiter learns of it. Each time the waiter is woken without a state — what
// the listener does on losing its connection and again once LISTEN is back in
// place — it re-reads, which here is: the win is announced once more.
func (s *silentListener) freezeAndAwaitWin(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.proxy.Freeze()
	s.notify(t, store.JobSucceeded)
	wakes := 0
	for {
		select {
		case got := <-s.waiter:
			switch got {
			case store.JobSucceeded:
				if wakes == 0 {
					t.Fatal("the win was delivered without the waiter being woken: was the connection frozen?")
				}
				if s.proxy.AcceptedAfterFreeze() == 0 {
					t.Fatal("the win was delivered with no connection opened after the freeze")
				}
				return
			case "":
				wakes++
				s.notify(t, store.JobSucceeded)
			}
		case <-ctx.Done():
			t.Fatalf("30 s after its connection went silent the listener had woken the waiter %d times and "+
				"delivered no notification since (connections opened through the proxy since: %d): it did not "+
				"notice the dead connection (no wake-up), or did not get back to LISTEN",
				wakes, s.proxy.AcceptedAfterFreeze())
		}
	}
}

// A listener whose connection dies silently — no FIN or RST, nothing more
// received — finds out by its liveness check rather than minutes later by
// TCP keepalive, reconnects, wakes its waiters (a notification may have been
// lost meanwhile), and delivers the notifications sent after that.
func TestListenerReconnectsWhenItsConnectionGoesSilent(t *testing.T) {
	s := setupSilentListener(t)
	s.freezeAndAwaitWin(t)
}

// When the listener reconnects after its connection died silently, the pool
// may hand it an idle connection that died the same way (the whole network
// path went quiet): the pool's health check of that connection, or the
// LISTEN on it, must not wait without limit either.
func TestListenerReconnectsPastADeadPooledConnection(t *testing.T) {
	s := setupSilentListener(t)
	// An idle connection in the listener's pool, open through the proxy when
	// it freezes.
	c, err := s.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if idle := s.pool.Stat().IdleConns(); idle != 1 {
		t.Fatalf("the listener's pool holds %d idle connections, want 1", idle)
	}
	s.freezeAndAwaitWin(t)
}
