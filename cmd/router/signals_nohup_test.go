package main

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// `nohup router serve &` starts the router with SIGHUP ignored, and a
// script's background job with SIGINT ignored: they stay ignored, or a
// closing terminal would drain and stop a router started so that it would
// not. Found by review.
func TestSignalsIgnoredAtStartStayIgnored(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGHUP, os.Interrupt} {
		signal.Ignore(sig) // as nohup (or the shell) starts the process
		_, stop := signalContext()
		ignored := signal.Ignored(sig)
		stop()
		signal.Reset(sig)
		if !ignored {
			t.Errorf("%v was ignored at start and the router stopped ignoring it", sig)
		}
	}
}
