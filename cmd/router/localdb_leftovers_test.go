package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Told to stop, localdb stops what its command left running before it exits
// (and before it stops the database): `go`, asked to stop, dies at once and
// its test binaries, re-parented to PID 1, used to go on running after
// PostgreSQL was stopped. Here the command is a shell whose background sleep
// outlives it. Found by review.
func TestLocalDBStopsWhatItsCommandLeftRunning(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://unused") // set: no server, the command as is
	dir := t.TempDir()
	ready, pidFile := filepath.Join(dir, "ready"), filepath.Join(dir, "pid")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"localdb", "--", "sh", "-c", `sleep 1000 & echo $! > "$1"; echo ready > "$2"; wait`, "sh", pidFile, ready})
	}()
	f, err := os.Open(ready) // blocks until the shell opens it to write
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil || line != "ready\n" {
		t.Fatalf("the command's ready line: %q, %v", line, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sleep, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(sleep, syscall.SIGKILL) }) // should the test fail
	if !running(sleep) {
		t.Fatalf("the command's sleep (pid %d) is not running before the stop", sleep)
	}
	cancel() // as main's signal handler does
	// The command's shell dies of the SIGTERM localdb sends it: no status of
	// its own, so localdb exits 128 + the signal that stopped it — a stop
	// without a signal's cause is taken as Ctrl-C's, 130.
	if code := <-done; code != 130 {
		t.Errorf("localdb stopped by a signal, its command killed by it: exit code %d, want 130", code)
	}
	if running(sleep) {
		t.Fatalf("the sleep the command started (pid %d) still runs after localdb exited", sleep)
	}
}

// running reports whether pid is a process that has not exited (a zombie,
// dead but not yet reaped by its parent, has).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && rest != "" && rest[0] != 'Z' && rest[0] != 'X'
}
