package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/testdb"
)

// silentDatabase is the URL of a "database" that accepts connections and
// never answers: a stuck proxy or load balancer, a firewall that accepts and
// drops.
func silentDatabase(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return fmt.Sprintf("postgres://router@%s/router?sslmode=disable", ln.Addr())
}

// runAsync runs f on its own goroutine; when t ends, cancel is called and f
// must have returned.
func runAsync(t *testing.T, cancel context.CancelFunc, f func() error) <-chan error {
	t.Helper()
	done, finished := make(chan error, 1), make(chan struct{})
	go func() { defer close(finished); done <- f() }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(90 * time.Second):
			t.Error("not returned 90s after being cancelled")
		}
	})
	return done
}

// A one-shot command on a database that accepts connections and never
// answers fails after the default connect timeout (10s), saying what to
// check: before, pgx waited for ever when the URL set no connect_timeout.
// (The 30s below only bounds a hang.)
func TestSilentDatabaseFailsAOneShotCommand(t *testing.T) {
	cfg := writeConfig(t, &testdb.DB{URL: silentDatabase(t)}, "  - name: p\n    type: scripted")
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(t, cancel, func() error { return runKeys(ctx, []string{"list", "--config", cfg}) })
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
	cfg := writeConfig(t, &testdb.DB{URL: silentDatabase(t)}, "  - name: p\n    type: scripted")
	stopped := func(t *testing.T, f func(ctx context.Context) error) error {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := runAsync(t, cancel, func() error { return f(ctx) })
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
