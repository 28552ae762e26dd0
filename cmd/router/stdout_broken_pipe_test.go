package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"
)

// A one-shot command whose output's reader is gone (`router jobs list --json |
// head -1`, `router version | true`) stops quietly, as a Unix tool killed by
// SIGPIPE does, and exits as a shell reports one, 141 (128+SIGPIPE): the
// router catches SIGPIPE (signalContext), so the write failed with EPIPE and
// the command said "write /dev/stdout: broken pipe" and exited 1, a failure.
func TestCommandWithItsOutputsReaderGoneStopsQuietly(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR.Close() // the reader is gone: a write fails with EPIPE (not fd 1, so no SIGPIPE kills the test)
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := make(chan string, 1)
	go func() { b, _ := io.ReadAll(errR); stderr <- string(b) }()
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outW, errW
	code := run(context.Background(), []string{"version"})
	os.Stdout, os.Stderr = oldOut, oldErr
	outW.Close()
	errW.Close()
	said := <-stderr
	errR.Close()
	if code != 141 || said != "" {
		t.Fatalf("router version with its stdout's reader gone: exit code %d, stderr %q; want exit code 141 (128+SIGPIPE) and nothing said", code, said)
	}
}

// Only stdout's EPIPE is the reader's doing: a broken pipe elsewhere (a
// connection to the database cut) is still said, and a failure.
func TestBrokenStdoutIsOnlyStdouts(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("print the jobs: %w", &fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.EPIPE}), true},
		{&fs.PathError{Op: "write", Path: os.Stderr.Name(), Err: syscall.EPIPE}, false},
		{&fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.ENOSPC}, false},
		{fmt.Errorf("list keys: %w", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}), false},
	} {
		if got := brokenStdout(c.err); got != c.want {
			t.Errorf("brokenStdout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
