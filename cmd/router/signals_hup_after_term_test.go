package main

import (
	"bufio"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// A SIGHUP after the first SIGTERM or Ctrl-C (the operator pressed Ctrl-C,
// then closed the terminal) is not the second signal: it asked for a
// graceful stop again, not for one at once — which cuts every attempt in
// flight, those still silent left unknown (SPEC §17). It is answered with a
// notice only; a SIGTERM after it is the second signal. Found by review: the
// SIGHUP was counted as the second signal.
func TestSIGHUPAfterSIGTERMDoesNotStopAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	hupNotice = pw
	t.Cleanup(func() { hupNotice = os.Stderr })
	// An earlier test may have left SIGHUP ignored (TestSignalsIgnoredAtStartStayIgnored:
	// signal.Reset does not undo signal.Ignore), and signalContext keeps an
	// ignored SIGHUP ignored; the router started from a terminal does not
	// ignore it. Notify ends the ignoring.
	unignore := make(chan os.Signal, 1)
	signal.Notify(unignore, syscall.SIGHUP)
	signal.Stop(unignore)
	spaceSignals(t) // two stops, not one reaching the router twice
	ctx, stop := signalContext()
	defer stop()
	seen := make(chan os.Signal, 1)
	signal.Notify(seen, syscall.SIGTERM)
	defer signal.Stop(seen)

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-seen
	<-ctx.Done() // the graceful stop

	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// The notice is written once the SIGHUP was counted (or not): after it,
	// what the SIGHUP did to the second signal's context is done.
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.Contains(line, "ignored") || !strings.Contains(line, "already stopping") {
		t.Fatalf("notice %q (%v), want one saying the SIGHUP is ignored, the router already stopping", line, err)
	}
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("a SIGHUP after SIGTERM ended the second signal's context (stop at once): %v", err)
	}

	// A SIGTERM now is the second signal: stop at once.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-seen
	<-secondSignal(ctx).Done()
}
