package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// hupNotice is where a SIGHUP is answered (a test's pipe, else stderr).
var hupNotice io.Writer = os.Stderr

// signalContext is the context main runs a command in. It ends at the first
// SIGTERM or Ctrl-C; the second ends secondSignal's context, for a command
// whose stop may take long (serve's drain) and that an operator who will not
// wait can cut short. Later signals are ignored, as long as the command runs.
// stop releases the signals.
//
// SIGHUP does not stop the command: its default action ends the process at
// once — a `kill -HUP` sent out of the habit of reloading a server's
// configuration would skip serve's drain and leave its attempts to recovery.
// The router reads its configuration only at start, and says so.
func signalContext() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2) // two signals in quick succession are both seen
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	first, cancelFirst := context.WithCancel(context.Background())
	second, cancelSecond := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				fmt.Fprintln(hupNotice, "router: SIGHUP ignored: the configuration is read only at start; "+
					"restart the router to apply a change (SIGTERM lets it drain first)")
			case <-done:
				return
			}
		}
	}()
	go func() {
		for _, cancel := range []context.CancelFunc{cancelFirst, cancelSecond} {
			select {
			case <-sigs:
				cancel()
			case <-done:
				return
			}
		}
		for { // Notify stays: a third signal must not kill the process mid-stop
			select {
			case <-sigs:
			case <-done:
				return
			}
		}
	}()
	return withSecondSignal(first, second), func() {
		signal.Stop(sigs)
		signal.Stop(hup)
		close(done)
		cancelFirst()
		cancelSecond()
	}
}

// secondSignalKey is the context key of withSecondSignal's context.
type secondSignalKey struct{}

// withSecondSignal returns ctx carrying second, which ends at the second
// SIGTERM or Ctrl-C (ctx itself ends at the first).
func withSecondSignal(ctx, second context.Context) context.Context {
	return context.WithValue(ctx, secondSignalKey{}, second)
}

// secondSignal is the context that ends at the second SIGTERM or Ctrl-C, or
// one that never ends when ctx did not come from signalContext (a test's).
func secondSignal(ctx context.Context) context.Context {
	if s, ok := ctx.Value(secondSignalKey{}).(context.Context); ok {
		return s
	}
	return context.Background()
}
