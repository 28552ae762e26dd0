package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// A SIGTERM after a SIGHUP (the terminal closed, or a `kill -HUP` meant as a
// reload, then systemd's or a supervisor's stop) asks for the graceful stop
// the SIGHUP began, not for one at once — which cuts every attempt in
// flight, those still silent left unknown (SPEC §17). Only a second SIGTERM
// or Ctrl-C stops at once. Found by review: the SIGHUP set the router
// stopping, and the first SIGTERM after it was counted as the second signal.
func TestSIGTERMAfterSIGHUPIsNotAStopAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	hupNotice = pw
	counted := make(chan os.Signal, 8)
	signalCounted = func(sig os.Signal) { counted <- sig }
	t.Cleanup(func() {
		hupNotice = os.Stderr
		signalCounted = nil
		pw.Close()
	})
	go func() { _, _ = io.Copy(io.Discard, pr) }() // the notices
	// An earlier test may have left SIGHUP ignored (see
	// TestSIGHUPAfterSIGTERMDoesNotStopAtOnce); Notify ends the ignoring.
	unignore := make(chan os.Signal, 1)
	signal.Notify(unignore, syscall.SIGHUP)
	signal.Stop(unignore)
	spaceSignals(t) // two stops, not one reaching the router twice
	ctx, stop := signalContext()
	defer stop()

	// send sends sig to this process and waits until signalContext's
	// goroutine has counted it and acted on it.
	send := func(sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		for got := range counted {
			if got == sig {
				return
			}
		}
	}

	send(syscall.SIGHUP)
	<-ctx.Done() // the graceful stop the SIGHUP began
	send(syscall.SIGTERM)
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("the first SIGTERM after a SIGHUP stopped the router at once (cut its drain): %v", err)
	}
	if sig, ok := stoppedBy(ctx); !ok || (sig != syscall.SIGHUP && sig != syscall.SIGTERM) {
		t.Fatalf("stoppedBy = %v, %v; want the SIGHUP (or the SIGTERM)", sig, ok)
	}

	// A second SIGTERM is the operator who will not wait: stop at once.
	send(syscall.SIGTERM)
	if secondSignal(ctx).Err() == nil {
		t.Fatal("a second SIGTERM after SIGHUP and SIGTERM did not stop the router at once")
	}
}

// The same with Ctrl-C: SIGHUP, then Ctrl-C twice; only the second Ctrl-C
// stops at once.
func TestCtrlCAfterSIGHUPIsNotAStopAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	hupNotice = pw
	counted := make(chan os.Signal, 8)
	signalCounted = func(sig os.Signal) { counted <- sig }
	t.Cleanup(func() {
		hupNotice = os.Stderr
		signalCounted = nil
		pw.Close()
	})
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	// This process may have been started with SIGINT ignored (a background
	// job's), as it may have SIGHUP: Notify ends the ignoring.
	unignore := make(chan os.Signal, 1)
	signal.Notify(unignore, syscall.SIGHUP, os.Interrupt)
	signal.Stop(unignore)
	spaceSignals(t) // two stops, not one reaching the router twice
	ctx, stop := signalContext()
	defer stop()
	send := func(sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		for got := range counted {
			if got == sig {
				return
			}
		}
	}
	send(syscall.SIGHUP)
	<-ctx.Done()
	send(syscall.SIGINT)
	if err := secondSignal(ctx).Err(); err != nil {
		t.Fatalf("the first Ctrl-C after a SIGHUP stopped the router at once: %v", err)
	}
	send(syscall.SIGINT)
	if secondSignal(ctx).Err() == nil {
		t.Fatal("a second Ctrl-C after SIGHUP and Ctrl-C did not stop the router at once")
	}
}
