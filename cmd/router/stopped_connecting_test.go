package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A command stopped by SIGTERM or Ctrl-C while it connects to the database
// says it was stopped, not that the database is unreachable: docs/operations.md
// says `router migrate` "Stopped by SIGTERM or Ctrl-C, it says so", and an
// operator told "database unreachable at HOST" goes looking at the network. The
// database here accepts connections and never answers (a slow server, a
// proxy); the signal comes once it has accepted one, long before
// connect_timeout (10s).
func TestCommandStoppedWhileConnectingSaysItWasStopped(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, []byte("log: {level: error}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // %s: the database's address
	}{
		{[]string{"migrate", "--config", cfg},
			"router migrate: stopped by a signal (stopped before the database at %s answered (stopped by SIGTERM); nothing was done): no migration was applied; run `router migrate` again"},
		{[]string{"keys", "list", "--config", cfg},
			"router keys list: stopped before the database at %s answered (stopped by SIGTERM); nothing was done"},
	} {
		// A database of its own for each command: the pool of the one
		// before may still be dialing the previous one.
		addr, accepted := silentDatabase(t)
		t.Setenv("DATABASE_URL", "postgres://u:p@"+addr+"/db?sslmode=disable")
		// As main's signal handler ends it: a SIGTERM, once the database
		// has accepted the connection.
		ctx, cancel := context.WithCancelCause(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			select {
			case <-accepted:
				cancel(signalStop{syscall.SIGTERM})
			case <-ctx.Done():
			}
		}()
		var code int
		_, stderr := captureOutput(t, func() { code = run(ctx, c.args) })
		cancel(nil)
		<-stopped
		want := fmt.Sprintf(c.want, addr)
		if code != 1 || strings.Contains(stderr, "unreachable") || !strings.Contains(stderr, want) {
			t.Errorf("router %s stopped by SIGTERM while connecting: exit code %d, stderr %q; want exit code 1 saying %q (not that the database is unreachable)",
				strings.Join(c.args[:len(c.args)-2], " "), code, stderr, want)
		}
	}
}

// silentDatabase is a server that accepts connections and never answers (a
// slow server, a proxy that does not pass them on). Each connection it
// accepts is announced on accepted (at most one waits there).
func silentDatabase(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), acc
}
