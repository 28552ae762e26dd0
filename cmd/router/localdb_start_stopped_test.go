package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// `router localdb` stopped by SIGTERM or Ctrl-C before its command runs —
// while it initialises or starts its PostgreSQL, the first seconds of every
// `make test` — exits 1, "the command failed while running", saying only
// "initdb: stopped (context canceled)" or a bare "context canceled" followed
// by the server log as if the server had failed. The same signal a moment
// later (after the server is ready, before the command started) exits 143
// ("<command> was not started", stoppedCommand), and `router help` documents
// 128 + the signal for a signal that stopped localdb. A script or CI step
// cannot tell the interruption from a failure, and the message names no
// signal. It should exit 128 + the signal, saying the command was not run.
func TestLocalDBStoppedWhileStartingExits128PlusSignal(t *testing.T) {
	t.Setenv("DATABASE_URL", "") // unset: localdb starts a PostgreSQL of its own
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	ctx, cancel := context.WithCancelCause(context.Background())
	// SIGTERM arrives as localdb starts its server (here: just before, the
	// same for the code: the start sees its context ended).
	cancel(signalStop{syscall.SIGTERM})
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(ctx, []string{"localdb", "--dir", filepath.Join(dir, "pg"), "--", "sh", "-c", `touch "$0"`, marker})
	})
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran although localdb was stopped before its server was ready")
	}
	if code != 143 || !strings.Contains(stderr, "SIGTERM") || strings.Contains(stderr, "context canceled") {
		t.Errorf("localdb stopped by SIGTERM while starting its PostgreSQL: exit code %d, stderr %q; "+
			"want 143 (128 + SIGTERM) and a message naming SIGTERM and that the command was not run, not \"context canceled\"",
			code, strings.TrimSpace(stderr))
	}
}
