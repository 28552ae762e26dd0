package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// On SIGTERM the tenant listener closes at once, but the operator listener
// stays up for the whole drain — its /metrics and dashboard show the attempts
// still finishing — and closes when the drain ends (docs/operations.md,
// Shutdown). Found by review: the docs said both listeners stop accepting.
func TestOperatorListenerServesThroughTheDrain(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, ""), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/v1/jobs",
			strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		req.Header.Set("Idempotency-Key", "ops-drain-1")
		req.Header.Set("Prefer", "wait=60")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-llm.arrived // the attempt is in flight
	sigterm()
	if got := <-answered; got != http.StatusAccepted {
		t.Errorf("the waiting caller at SIGTERM: %d, want 202", got)
	}
	for { // the tenant listener closes at once
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
	}
	resp, err := http.Get("http://" + opsLn.Addr().String() + "/metrics")
	if err != nil {
		t.Fatalf("the operator listener during the drain: %v; want it serving until the drain ends", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics during the drain: %d, want 200", resp.StatusCode)
	}
	close(llm.release) // the attempt ends: the drain is over
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", opsLn.Addr().String()); err == nil {
		c.Close()
		t.Error("the operator listener still accepts after the drain ended")
	}
}
