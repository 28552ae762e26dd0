package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext is the context main runs a command in. It ends at the first
// SIGTERM or Ctrl-C; the second ends secondSignal's context, for a command
// whose stop may take long (serve's drain) and that an operator who will not
// wait can cut short. Later signals are ignored, as long as the command runs.
// stop releases the signals.
func signalContext() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2) // two signals in quick succession are both seen
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	first, cancelFirst := context.WithCancel(context.Background())
	second, cancelSecond := context.WithCancel(context.Background())
	done := make(chan struct{})
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
