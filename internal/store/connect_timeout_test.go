package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Connect bounds the connection with connect_timeout: by default 10s, since
// pgx (like libpq) otherwise waits for ever; the URL's connect_timeout or
// PGCONNECT_TIMEOUT wins, 0 included (wait for ever, as the operator asked).
func TestConnectDefaultsTheConnectTimeout(t *testing.T) {
	db := testdb.New(t, store.Options{})
	timeout := func(url string) time.Duration {
		t.Helper()
		var got time.Duration
		pool, err := store.Connect(context.Background(), url, func(c *pgxpool.Config) { got = c.ConnConfig.ConnectTimeout })
		if err != nil {
			t.Fatal(err)
		}
		pool.Close()
		return got
	}
	t.Setenv("PGCONNECT_TIMEOUT", "")
	if got := timeout(db.URL); got != 10*time.Second {
		t.Errorf("no connect_timeout: %s, want 10s", got)
	}
	for _, set := range []string{"0", "3"} {
		if got, want := timeout(db.URL+"&connect_timeout="+set), set+"s"; got.String() != want {
			t.Errorf("connect_timeout=%s in the URL: %s, want %s", set, got, want)
		}
	}
	t.Setenv("PGCONNECT_TIMEOUT", "7")
	if got := timeout(db.URL); got != 7*time.Second {
		t.Errorf("PGCONNECT_TIMEOUT=7: %s, want 7s", got)
	}
}

// A database that accepts the connection and never answers fails Connect
// once connect_timeout has passed, saying what to check and what to set.
func TestConnectToASilentDatabaseSaysWhatToDo(t *testing.T) {
	silent := testdb.SilentDatabase(t)
	_, err := store.Connect(context.Background(), silent.URL+"&connect_timeout=1")
	if err == nil {
		t.Fatal("connected to a database that never answers")
	}
	for _, want := range []string{"database at " + silent.Addr + " did not answer within 1s (connect_timeout)", "check the host and port", "connect_timeout=SECONDS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Connect stopped (Ctrl-C, SIGTERM) while the database does not answer
// returns at once, without waiting for the pool's own dials of its
// pool_min_conns, which pgxpool starts on a context nobody cancels, bounded
// only by connect_timeout (here 0: for ever) and its own minute. (The 30s
// below only bounds a hang.)
func TestConnectStoppedWhileTheDatabaseIsSilentReturns(t *testing.T) {
	silent := testdb.SilentDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := testdb.RunAsync(t, cancel, func() error {
		pool, err := store.Connect(ctx, silent.URL+"&connect_timeout=0")
		if err == nil {
			pool.Close()
		}
		return err
	})
	// The stop comes once all five connections are being made: the pool's
	// four of pool_min_conns, and the one Connect checks with.
	for range 5 {
		<-silent.Accepted
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("got %v, want the stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Connect still waiting 30s after it was stopped")
	}
}
