package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// A SIGHUP because the terminal closed, with the router's log read through a
// pipe whose reader has died with it (`make run | tee`): writing the notice
// (or any log line of the drain) to stderr fails with EPIPE, and Go's runtime
// used to kill the process by SIGPIPE then, skipping the drain. It must stop
// gracefully and exit 0. The process is this test binary, as
// TestSignalsPipeHelper. Found by review.
func TestSIGHUPWithABrokenStderrStopsGracefully(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the log's reader is gone
	defer w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalsPipeHelper$")
	cmd.Env = append(os.Environ(), "SIGNALS_PIPE_HELPER=1")
	cmd.Stderr = w
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := bufio.NewReader(out)
	if line, err := lines.ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the helper's ready line: %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	rest, _ := lines.ReadString('\n')
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("killed by %v after SIGHUP with stderr a broken pipe; want a graceful stop, exit 0", ws.Signal())
		}
	}
	if err != nil || rest != "stopped\n" {
		t.Fatalf("after SIGHUP with stderr a broken pipe: %v, stdout %q; want exit 0 after \"stopped\"", err, rest)
	}
}

// TestSignalsPipeHelper is the process of
// TestSIGHUPWithABrokenStderrStopsGracefully (it does nothing in an ordinary
// run): it runs signalContext, says it is ready, and once stopped writes to
// stderr as a drain logs, then exits 0.
func TestSignalsPipeHelper(t *testing.T) {
	if os.Getenv("SIGNALS_PIPE_HELPER") == "" {
		return // an ordinary run: only TestSIGHUPWithABrokenStderrStopsGracefully runs it, as its process
	}
	// Started from a terminal, the router does not ignore SIGHUP; this
	// process may have inherited it ignored from the test binary
	// (TestSignalsIgnoredAtStartStayIgnored ignores it, and signal.Reset does
	// not undo signal.Ignore). Notify ends the ignoring.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	signal.Stop(hup)
	ctx, stop := signalContext()
	fmt.Println("ready")
	<-ctx.Done() // the notice went to the broken stderr first
	fmt.Fprintln(os.Stderr, "draining")
	stop()
	fmt.Println("stopped")
	os.Exit(0)
}
