// Package trickle is a provider server for tests that sends a response's
// head and then trickles the rest: header lines that never end, or interim
// (1xx) responses never followed by a final one — what net/http's test server
// cannot write. The adapters' tests (internal/providers) and the end-to-end
// tests (internal/providers/endtoend) share it.
package trickle

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Server is a raw TCP server that reads each request and answers with head
// at once, then writes line every interval until the client goes away or
// the test ends: a status line followed by header lines that never end, or
// interim responses that are never followed by a final one. net/http's test
// server cannot write a response's header lines one by one.
func Server(t testing.TB, head, line string, interval time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		_ = ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				if _, err := io.WriteString(c, head); err != nil {
					return
				}
				tick := time.NewTicker(interval)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
					}
					if _, err := io.WriteString(c, line); err != nil {
						return // the client went away
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}
