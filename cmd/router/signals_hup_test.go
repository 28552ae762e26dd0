package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A SIGHUP (a terminal closing, or a kill -HUP sent out of the habit of
// reloading a server) does not kill the router at once — its default action
// would, skipping serve's drain — but stops it gracefully, as SIGTERM does,
// with a notice that the configuration is read only at start.
func TestSIGHUPStopsGracefully(t *testing.T) {
	pr, pw := io.Pipe()
	hupNotice = pw
	t.Cleanup(func() { hupNotice = os.Stderr })
	ctx, stop := signalContext()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n') // the signal was handled (a killed process fails the test run)
	if err != nil || !strings.Contains(line, "stopping gracefully") || !strings.Contains(line, "restart") {
		t.Fatalf("notice %q (%v), want one saying SIGHUP stops gracefully and that a restart applies a change", line, err)
	}
	<-ctx.Done() // the graceful stop's signal
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("a SIGHUP also ended the second signal's context (stop at once): %v", err)
	}
	// A SIGTERM after it is not the second signal: it asks for the same
	// graceful stop (TestSIGTERMAfterSIGHUPIsNotAStopAtOnce).
}
