package store_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// silentDatabase is a server that accepts connections and never answers (a
// slow server, or a proxy that does not pass them on). Each accepted
// connection is announced on the channel returned.
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

// Stopped while connecting (SIGTERM, Ctrl-C: the caller's context ends), Connect
// says it was stopped before the database answered, with the stop's cause, not
// that the database is unreachable, which sends an operator to the network.
func TestConnectStoppedBeforeTheDatabaseAnswered(t *testing.T) {
	addr, accepted := silentDatabase(t)
	stop := errors.New("stopped by SIGTERM") // as cmd/router's signal context's cause reads
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		<-accepted // the dial reached the server, which stays silent
		cancel(stop)
	}()
	pool, err := store.Connect(ctx, "postgres://u:p@"+addr+"/db?sslmode=disable")
	if err == nil {
		pool.Close()
		t.Fatal("Connect to a database that never answers succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "unreachable") || !strings.Contains(msg, "stopped before the database at "+addr+" answered") ||
		!strings.Contains(msg, "stopped by SIGTERM") || !strings.Contains(msg, "nothing was done") || !errors.Is(err, stop) {
		t.Fatalf("Connect stopped while connecting: %q; want it to say it was stopped before the database at %s answered (nothing done), wrapping the stop's cause", msg, addr)
	}
}
