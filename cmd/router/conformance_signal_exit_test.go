package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run` interrupted by a signal exits 128 plus the
// signal's number, as a shell reports a process a signal ended: 130 for
// Ctrl-C, 143 for SIGTERM. It exited 1, as a run whose targets failed, so a
// script (a CI step, `make`) could not tell "interrupted" from "failed".
// Found by review.
func TestConformanceRunInterruptedExitsWithTheSignal(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			db := testdb.New(t, store.Options{})
			// The provider holds the first case's request until the client
			// gives up on it: the signal comes while the run is under way.
			arrived, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				once.Do(func() { close(arrived) })
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer srv.Close()
			defer close(release) // before Close, which waits for the handlers
			cfg := writeConfig(t, db, fmt.Sprintf(`  - name: held
    type: openai
    base_url: %s/v1
    model: gpt-4o-mini
    stream: false
    max_retries: 0`, srv.URL))
			bg := context.Background()
			first, signalled := context.WithCancelCause(bg)
			defer signalled(nil)
			ctx := withSecondSignal(first, bg)
			done := make(chan int, 1)
			var stdout, stderr string
			go func() {
				var code int
				stdout, stderr = captureOutput(t, func() {
					code = run(ctx, []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"})
				})
				done <- code
			}()
			<-arrived
			signalled(signalStop{c.sig}) // what signalContext does on that signal
			code := <-done
			if code != c.code || !strings.Contains(stdout, "interrupted: 0 of 1 planned results finished") ||
				!strings.HasPrefix(stderr, "router conformance run: conformance run interrupted") ||
				!strings.Contains(stderr, fmt.Sprintf("(stopped by %s; exit status %d)", signalName(c.sig), c.code)) {
				t.Fatalf("conformance run stopped by %v: exit %d, stdout:\n%s\nstderr %q\nwant exit %d and the run reported interrupted", c.sig, code, stdout, stderr, c.code)
			}
		})
	}
}

// signalContext's context says which signal ended it (stoppedBy), which is
// what the exit code of a run it interrupts is made of.
func TestSignalContextSaysWhichSignalEndedIt(t *testing.T) {
	// As in TestSignalContextSeesASecondSignal: every signal sent is also
	// delivered here and waited for, so none is left pending when stop
	// releases SIGTERM.
	seen := make(chan os.Signal, 2)
	signal.Notify(seen, syscall.SIGTERM)
	defer signal.Stop(seen)
	ctx, stop := signalContext()
	defer stop()
	if sig, ok := stoppedBy(ctx); ok {
		t.Fatalf("before any signal, stoppedBy = %v", sig)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-seen
	<-ctx.Done()
	sig, ok := stoppedBy(ctx)
	if !ok || sig != syscall.SIGTERM {
		t.Fatalf("after SIGTERM, stoppedBy = %v, %v; want SIGTERM", sig, ok)
	}
	if code := (stoppedError{sig: sig}).exitCode(); code != 143 {
		t.Fatalf("exit code for SIGTERM %d, want 143", code)
	}
	if code := (stoppedError{sig: os.Interrupt}).exitCode(); code != 130 {
		t.Fatalf("exit code for SIGINT %d, want 130", code)
	}
}
