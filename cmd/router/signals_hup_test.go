package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A SIGHUP (sent out of the habit of reloading a server) neither kills the
// router — its default action would, skipping serve's drain — nor stops the
// command: it is answered with a notice that the configuration is read only
// at start.
func TestSIGHUPIsAnsweredNotObeyed(t *testing.T) {
	pr, pw := io.Pipe()
	hupNotice = pw
	t.Cleanup(func() { hupNotice = os.Stderr })
	ctx, stop := signalContext()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n') // the signal was handled (a killed process fails the test run)
	if err != nil || !strings.Contains(line, "SIGHUP ignored") || !strings.Contains(line, "restart") {
		t.Fatalf("notice %q (%v), want one saying SIGHUP is ignored and to restart", line, err)
	}
	if ctx.Err() != nil {
		t.Fatal("a SIGHUP stopped the command")
	}
}
