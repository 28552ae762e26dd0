package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Closing the database does not wait for ever for a connection still in use
// (pgxpool's Close would): it gives up after dbCloseWait, or at once when the
// operator asked to stop now (a second signal). Found by review: a handler
// waiting on a held row kept the router from exiting.
func TestCloseDatabaseDoesNotWaitForEverForAConnectionInUse(t *testing.T) {
	db := testdb.New(t, store.Options{})
	log := slog.New(slog.DiscardHandler)
	defer SetDBCloseWait(dbCloseWait)()
	stopNow, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		wait time.Duration
		now  context.Context
	}{
		{"after dbCloseWait", 50 * time.Millisecond, nil},
		{"at a second signal", time.Hour, stopNow},
	} {
		pool, err := pgxpool.New(context.Background(), db.URL)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pool.Acquire(context.Background()) // never returned before the close
		if err != nil {
			t.Fatal(err)
		}
		SetDBCloseWait(c.wait)
		closed := make(chan struct{})
		go func() { defer close(closed); closeDatabase(pool, nil, log, c.now) }()
		select {
		case <-closed:
		case <-time.After(time.Minute): // only to fail rather than hang
			t.Errorf("%s: closeDatabase still waits a minute later for the connection in use", c.name)
		}
		conn.Release()
		<-closed
	}
}
