package main

import (
	"bufio"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spaceSignals makes signalContext see each signal a second after the one
// before it, as an operator pressing Ctrl-C twice would send them: a test
// sending two stop signals back to back means two stops, not one that
// reached the router twice (sameStop). Set it before signalContext.
func spaceSignals(t *testing.T) {
	t.Helper()
	var mu sync.Mutex
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	signalNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		return at
	}
	t.Cleanup(func() { signalNow = time.Now })
}

// A stop sent to the router's process group (GNU timeout, `kill -- -PGID`,
// tini -g) reaches it twice, within milliseconds; so does one Ctrl-C under
// `router localdb -- router serve` (the terminal's SIGINT and the SIGTERM
// localdb forwards). Both counted, the second skipped the drain the operator
// asked for (found by review: `timeout 8 router serve` logged "second
// signal: stopping now" before "shutting down"). A signal that comes with the
// first is the same graceful stop, answered with a notice; one sent later is
// the second signal.
func TestSignalWithTheFirstIsTheSameStop(t *testing.T) {
	var mu sync.Mutex
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	signalNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
	pr, pw := io.Pipe()
	hupNotice = pw
	counted := make(chan os.Signal, 8)
	signalCounted = func(sig os.Signal) { counted <- sig }
	t.Cleanup(func() {
		signalNow = time.Now
		hupNotice = os.Stderr
		signalCounted = nil
		pw.Close()
	})
	// Every SIGTERM sent is also delivered here, so that none is left
	// pending when signalContext's stop releases it (see
	// TestSignalContextSeesASecondSignal).
	seen := make(chan os.Signal, 4)
	signal.Notify(seen, syscall.SIGTERM)
	defer signal.Stop(seen)
	ctx, stop := signalContext()
	defer stop()
	send := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-seen
		<-counted
	}

	send()
	<-ctx.Done() // the graceful stop
	mu.Lock()
	at = at.Add(sameStop - time.Millisecond)
	mu.Unlock()
	send() // the same stop, reaching the router again
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("a SIGTERM that came with the first stopped the router at once (cut its drain): %v", err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.Contains(line, "SIGTERM ignored") || !strings.Contains(line, "same graceful stop") ||
		!strings.Contains(line, "send another to stop at once") {
		t.Fatalf("notice %q (%v), want one saying the SIGTERM is taken as the same graceful stop, and how to stop at once", line, err)
	}

	mu.Lock()
	at = at.Add(time.Millisecond) // sameStop after the first
	mu.Unlock()
	send()
	if secondSignal(ctx).Err() == nil {
		t.Fatal("a SIGTERM sent sameStop after the first did not stop the router at once")
	}
}
