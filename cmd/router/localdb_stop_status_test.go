package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// `router localdb` "exits with the command's exit status" (docs/operations.md,
// and its --help), also when a signal stops it and it asks its command to
// stop: a command that stops cleanly (exit 0, as `router serve` does after its
// drain, the docs' own `router localdb -- router serve`) must not become exit
// 1, "failed while running", which a script or supervisor reads as a failure.
// A command that exits N when asked to stop gives N; one ended by the signal
// (it has no status of its own) gives 128 plus the signal that stopped
// localdb, as `router conformance run` exits when a signal interrupts it.
func TestLocalDBStoppedBySignalKeepsItsCommandsVerdict(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://unused") // set: localdb runs the command as is
	for _, c := range []struct {
		name, onTerm string // onTerm: the shell's SIGTERM trap; "" leaves SIGTERM's default action (the shell dies of it)
		want         int
		says         string
	}{
		{"exits 0 when asked", "trap 'kill $!; exit 0' TERM;", 0, ""},
		{"exits 5 when asked", "trap 'kill $!; exit 5' TERM;", 5, "exited with status 5"},
		{"killed by SIGTERM", "", 143, "ended by signal terminated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The shell says it is ready (its trap set) through a FIFO, then
			// waits on a child: a trapped SIGTERM ends the wait at once.
			ready := filepath.Join(t.TempDir(), "ready")
			if err := syscall.Mkfifo(ready, 0o600); err != nil {
				t.Fatal(err)
			}
			script := c.onTerm + ` echo ready > "$0"; sleep 60 </dev/null >/dev/null 2>&1 & wait`
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				var r result
				_, r.stderr = captureOutput(t, func() { r.code = run(ctx, []string{"localdb", "--", "sh", "-c", script, ready}) })
				done <- r
			}()
			line := make(chan string, 1)
			go func() { // blocks until the shell opens the FIFO to write
				f, err := os.Open(ready)
				if err != nil {
					line <- err.Error()
					return
				}
				defer f.Close()
				s, _ := bufio.NewReader(f).ReadString('\n')
				line <- s
			}()
			select {
			case s := <-line:
				if s != "ready\n" {
					t.Fatalf("the command's ready line: %q", s)
				}
			case r := <-done:
				t.Fatalf("localdb ended before its command was ready: exit code %d, stderr %q", r.code, r.stderr)
			}
			cancel(signalStop{syscall.SIGTERM}) // as main's signal handler does
			r := <-done
			if r.code != c.want || !strings.Contains(r.stderr, c.says) {
				t.Errorf("localdb stopped by SIGTERM, its command %s: exit code %d, stderr %q; want exit code %d saying %q",
					c.name, r.code, r.stderr, c.want, c.says)
			}
			if c.want == 0 && (strings.Contains(r.stderr, "stopped") || strings.Contains(r.stderr, "exited")) {
				t.Errorf("localdb stopped by SIGTERM, its command exiting 0: stderr %q, want no error said (a clean stop)", r.stderr)
			}
		})
	}
}
