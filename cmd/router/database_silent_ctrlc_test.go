package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/testdb"
)

// Ctrl-C while connecting to a database that does not answer stops at once:
// before, closing the pool waited for pgxpool's own dials of its
// pool_min_conns (a minute), and serve, stopped before it was ready, exited
// 0 only then. No sleep and no tight bound: the Ctrl-C comes once the silent database has accepted the
// command's connection (Silent.Accepted, not a second's sleep), and the URL's
// connect_timeout is ten minutes, so a command that ignored the Ctrl-C would
// run for ten minutes, and one whose pool's Close waited for its own dials of
// pool_min_conns for pgxpool's minute: the 30s below is half the shorter of
// the two and far above any honest duration (the former 6s bound sat 4s from
// the 10s default connect_timeout by which "keys list" ends anyway).
func TestCtrlCWhileConnectingReturnsPromptly(t *testing.T) {
	stopped := func(t *testing.T, f func(cfg string, ctx context.Context) error) error {
		t.Helper()
		silent := testdb.SilentDatabase(t)
		cfg := writeConfig(t, &testdb.DB{URL: silent.URL + "&connect_timeout=600"}, "  - name: p\n    type: scripted")
		ctx, cancel := context.WithCancel(context.Background())
		done := testdb.RunAsync(t, cancel, func() error { return f(cfg, ctx) })
		select {
		case <-silent.Accepted: // connecting, and the database will never answer: the Ctrl-C
		case err := <-done:
			t.Fatalf("returned before it connected: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("never connected to the database (a hang guard)")
		}
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("still running 30s after Ctrl-C, with a connect_timeout of ten minutes (pgxpool's own dials of pool_min_conns run up to a minute)")
			return nil
		}
	}
	t.Run("keys list", func(t *testing.T) {
		err := stopped(t, func(cfg string, ctx context.Context) error { return runKeys(ctx, []string{"list", "--config", cfg}) })
		if err == nil || !strings.Contains(err.Error(), "stopped before the database") {
			t.Fatalf("keys list stopped while connecting: %v; want the stop said as such", err)
		}
	})
	t.Run("serve", func(t *testing.T) {
		keepGC(t)
		api, ops := listen(t), listen(t)
		if err := stopped(t, func(cfg string, ctx context.Context) error {
			loaded, err := config.Load(cfg)
			if err != nil {
				return err
			}
			return serve(ctx, loaded, api, ops, nil)
		}); err != nil {
			t.Fatalf("serve stopped before it was ready: %v; want nil (exit 0)", err)
		}
	})
}
