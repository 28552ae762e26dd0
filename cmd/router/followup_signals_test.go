package main

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// main's context ends at the first SIGTERM, the second signal's at the
// second, and a third does not kill the process while the command runs. (With
// signal.NotifyContext the second signal went unseen: `router serve` could
// not be told to stop its drain.)
func TestSignalContextSeesASecondSignal(t *testing.T) {
	// Every signal sent is also delivered here, and waited for: a signal
	// still pending in the runtime when signalContext's stop releases
	// SIGTERM would take its default action and kill the test binary. This
	// registration is released last (deferred first).
	seen := make(chan os.Signal, 4)
	signal.Notify(seen, syscall.SIGTERM)
	defer signal.Stop(seen)
	spaceSignals(t) // two stops, not one reaching the router twice
	ctx, stop := signalContext()
	defer stop()
	kill := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-seen
	}
	kill()
	<-ctx.Done()
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("after one signal the second signal's context has ended: %v", err)
	}
	kill()
	<-secondSignal(ctx).Done()
	kill() // ignored; a process killed here fails the test run
	kill()
}
