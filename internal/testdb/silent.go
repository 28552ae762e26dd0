package testdb

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// Silent is a "database" that accepts connections and never answers: a stuck
// proxy or load balancer, a firewall that accepts and drops.
type Silent struct {
	Addr string // its host:port
	URL  string // a connection URL for Addr (sslmode=disable, no other parameter)
	// Accepted receives a value as each connection is accepted (up to 64
	// unread; later ones are not reported).
	Accepted <-chan struct{}
}

// SilentDatabase starts a Silent database that closes, with every connection
// it accepted, when t ends.
func SilentDatabase(t testing.TB) *Silent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 64)
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
			select {
			case accepted <- struct{}{}:
			default:
			}
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
	addr := ln.Addr().String()
	return &Silent{Addr: addr, URL: fmt.Sprintf("postgres://router@%s/router?sslmode=disable", addr), Accepted: accepted}
}

// RunAsync runs f on its own goroutine and returns the channel its error
// arrives on. When t ends, cancel is called and f must have returned (the 90s
// only bound a hang).
func RunAsync(t testing.TB, cancel context.CancelFunc, f func() error) <-chan error {
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
