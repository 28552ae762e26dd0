package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/testdb"
)

// A one-shot command on a database that accepts connections and never
// answers fails after the default connect timeout (10s), saying what to
// check: before, pgx waited for ever when the URL set no connect_timeout.
// (The 30s below only bounds a hang.)
func TestSilentDatabaseFailsAOneShotCommand(t *testing.T) {
	cfg := writeConfig(t, &testdb.DB{URL: testdb.SilentDatabase(t).URL}, "  - name: p\n    type: scripted")
	ctx, cancel := context.WithCancel(context.Background())
	done := testdb.RunAsync(t, cancel, func() error { return runKeys(ctx, []string{"list", "--config", cfg}) })
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not answer within 10s (connect_timeout)") || !strings.Contains(err.Error(), "connect_timeout=SECONDS") {
			t.Fatalf("got %v; want the database's silence and what to do", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30s later, on a database that never answers")
	}
}

// Ctrl-C while connecting to a database that does not answer stops at once:
// before, closing the pool waited for pgxpool's own dials of its
// pool_min_conns (a minute), and serve, stopped before it was ready, exited
// 0 only then. (The 6s below only bound a hang.)
func TestCtrlCWhileConnectingReturnsPromptly(t *testing.T) {
	cfg := writeConfig(t, &testdb.DB{URL: testdb.SilentDatabase(t).URL}, "  - name: p\n    type: scripted")
	stopped := func(t *testing.T, f func(ctx context.Context) error) error {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := testdb.RunAsync(t, cancel, func() error { return f(ctx) })
		time.AfterFunc(time.Second, cancel) // the Ctrl-C, while the connection waits
		select {
		case err := <-done:
			return err
		case <-time.After(6 * time.Second):
			t.Fatal("still running 5s after Ctrl-C")
			return nil
		}
	}
	t.Run("keys list", func(t *testing.T) {
		if err := stopped(t, func(ctx context.Context) error { return runKeys(ctx, []string{"list", "--config", cfg}) }); err == nil {
			t.Fatal("keys list succeeded on a database that never answered")
		}
	})
	t.Run("serve", func(t *testing.T) {
		loaded, err := config.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		keepGC(t)
		if err := stopped(t, func(ctx context.Context) error { return serve(ctx, loaded, listen(t), listen(t), nil) }); err != nil {
			t.Fatalf("serve stopped before it was ready: %v; want nil (exit 0)", err)
		}
	})
}
