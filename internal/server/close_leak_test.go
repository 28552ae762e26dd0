package server_test

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// goroutineID is the id in a goroutine's stack header ("goroutine 7 [...]").
var goroutineID = regexp.MustCompile(`^goroutine (\d+) `)

// goroutinesWith returns, by id, the stacks of the running goroutines that
// mention any of marks (this file's own excepted).
func goroutinesWith(marks ...string) map[string]string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		id := goroutineID.FindStringSubmatch(g)
		if id == nil || strings.Contains(g, "close_leak_test.go") {
			continue
		}
		for _, m := range marks {
			if strings.Contains(g, m) {
				out[id[1]] = g
				break
			}
		}
	}
	return out
}

// Close leaves nothing of the router running: the providers' keep-alive
// connections, and the two goroutines each holds, were left to the
// transport's idle timeout (90 s) — the adapters' transports were their
// own, and nothing closed them. Found by review.
func TestCloseLeavesNoProviderConnectionRunning(t *testing.T) {
	marks := []string{"routerhq/router/internal", "riverqueue", "net/http.(*persistConn)"}
	before := goroutinesWith(marks...) // another test's leftovers are not this one's
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	close(llm.release) // the provider answers at once: the job succeeds, its connection kept alive
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, "shutdown: {http: 1s, drain: 2s}"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()
	req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/v1/jobs",
		strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Idempotency-Key", "close-leak")
	req.Header.Set("Prefer", "wait=10")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/jobs: %d, want the job answered", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections() // the test's own
	sigterm()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	srv.Close()
	// A closed connection's goroutines end as they see it closed: soon,
	// but not within Close. Looked for until they are gone, up to a bound
	// far below the idle timeout that ended them before.
	var left map[string]string
	for end := time.Now().Add(20 * time.Second); ; {
		left = goroutinesWith(marks...)
		for id := range before {
			delete(left, id)
		}
		if len(left) == 0 || time.Now().After(end) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		var stacks []string
		for _, g := range left {
			stacks = append(stacks, g)
		}
		t.Errorf("%d goroutines still running 20s after Close:\n%s", len(left), strings.Join(stacks, "\n\n"))
	}
}
