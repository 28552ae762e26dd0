package main

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The router's handling of SIGPIPE (a write to a log whose reader is gone
// fails instead of killing it) must not reach the commands it starts: `router
// localdb -- make test` runs shells whose `producer | head` pipelines end by
// SIGPIPE. An ignored signal stays ignored across exec; a caught one does not.
// It was ignored (signal.Ignore), and every command localdb ran started with
// SIGPIPE ignored. Found in review.
func TestSignalContextLeavesSIGPIPEToChildren(t *testing.T) {
	_, stop := signalContext()
	defer stop()
	out, err := exec.Command("sh", "-c", "grep '^SigIgn:' /proc/self/status").Output()
	if err != nil {
		t.Fatalf("reading a child's ignored signals: %v", err)
	}
	field := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "SigIgn:"))
	mask, err := strconv.ParseUint(field, 16, 64)
	if err != nil {
		t.Fatalf("a child's SigIgn line %q: %v", out, err)
	}
	if bit := uint64(1) << (uint(syscall.SIGPIPE) - 1); mask&bit != 0 {
		t.Fatalf("a command started after signalContext has SIGPIPE ignored (SigIgn %s); want its default action", field)
	}
}
