package localpg_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// Restart after Stop is refused at once, and leaves no watch: one took the
// stopped server for a crashed one, started it again after Stop and logged
// errors for ever. Found by review.
func TestRestartAfterStopLeavesNoWatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, logs := startLogged(t, ctx, false)
	c.Stop()
	rerr := c.Restart(ctx)
	if rerr == nil || !strings.Contains(rerr.Error(), "stopped") {
		t.Errorf("Restart after Stop: err %v, want a refusal saying the cluster was stopped", rerr)
	}
	if localpg.Watching(c) {
		t.Errorf("Restart after Stop (err %v) left a watch running", rerr)
	}
	if c.Started() {
		t.Errorf("Restart after Stop (err %v): the cluster says it runs its server", rerr)
	}
	if pid, ok := localpg.RunningServer(data); ok {
		t.Errorf("server (pid %d) running after Stop then Restart (err %v)", pid, rerr)
	}
	if after := logs.String(); strings.Contains(after, "exited unexpectedly") || strings.Contains(after, "cannot be started again") {
		t.Errorf("Restart after Stop (err %v) treated the stopped server as crashed:\n%s", rerr, after)
	}
}

// A Restart whose start fails leaves the server stopped, and no watch that
// would take it for a crashed one (and start it again, logging errors).
// Found by review.
func TestFailedRestartLeavesNoWatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, logs := startLogged(t, ctx, false)
	// postgres refuses to start on a data directory others may read.
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(data, 0o700) })
	rerr := c.Restart(ctx)
	if rerr == nil {
		t.Fatal("Restart on a data directory of mode 0777 succeeded")
	}
	if localpg.Watching(c) {
		t.Errorf("failed Restart (err %v) left a watch running", rerr)
	}
	if c.Started() {
		t.Errorf("failed Restart (err %v): the cluster says it runs its server", rerr)
	}
	if after := logs.String(); strings.Contains(after, "exited unexpectedly") || strings.Contains(after, "cannot be started again") {
		t.Errorf("failed Restart (err %v) left a watch treating the server as crashed:\n%s", rerr, after)
	}
	c.Stop()
	if pid, ok := localpg.RunningServer(data); ok {
		t.Errorf("server (pid %d) running after a failed Restart then Stop", pid)
	}
}

// Restart and Stop at once take turns: whichever comes first, nothing runs
// and nothing watches once both have returned. They read and wrote the
// watch's fields at once (a data race, under -race). Found by review.
func TestConcurrentRestartAndStopLeaveNothingRunning(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, logs := startLogged(t, ctx, false)
	restarted := make(chan error, 1)
	go func() { restarted <- c.Restart(ctx) }()
	c.Stop()
	rerr := <-restarted
	if localpg.Watching(c) {
		t.Errorf("Restart (err %v) and Stop at once left a watch running", rerr)
	}
	if c.Started() {
		t.Errorf("Restart (err %v) and Stop at once: the cluster says it runs its server", rerr)
	}
	if pid, ok := localpg.RunningServer(data); ok {
		t.Errorf("server (pid %d) running after Restart (err %v) and Stop at once", pid, rerr)
	}
	if after := logs.String(); strings.Contains(after, "exited unexpectedly") || strings.Contains(after, "cannot be started again") {
		t.Errorf("Restart (err %v) and Stop at once: the server was treated as crashed:\n%s", rerr, after)
	}
}
