package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router serve` ends its shutdown on a line of its own, "router stopped",
// after everything it closed; it used to end on a library's ("River client
// stopped"), which left an operator wondering whether it had finished.
// Found by a newcomer walkthrough.
func TestServeEndsOnRouterStopped(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := serveConfig(t, db, "stopped-log", "stopped-log-key", `log: {level: info}
providers:
  - name: scripted
    type: scripted
routes:
  default:
    providers: [scripted]
`)
	ln, opsLn := listen(t), listen(t)
	var err error
	_, stderr := captureOutput(t, func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, ln, opsLn, nil) }()
		// Served once the router is ready (the request waits in the accept
		// queue until then): stopped after, it shuts down rather than
		// giving up its start.
		client := &http.Client{Timeout: time.Minute}
		resp, gerr := client.Get("http://" + ln.Addr().String() + "/v1/nothing-here")
		if gerr == nil {
			resp.Body.Close()
		}
		cancel()
		err = <-done
		if gerr != nil {
			t.Errorf("request to the router: %v", gerr)
		}
	})
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg="router stopped"`) {
		t.Errorf("serve's log ends on %q, want router stopped; the log:\n%s", last, stderr)
	}
	if !strings.Contains(stderr, "River client stopped") {
		t.Errorf("the log does not show River stopping, which router stopped should follow:\n%s", stderr)
	}
}
