package localpg_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// A shutdown of the owner's server that someone asked for (SIGTERM from
// systemd to the whole control group while the router stops, pg_ctl stop)
// is not a crash: it is logged as a warning, and the server is not started
// again. It was logged as an error and a new server started. Found by review.
func TestOwnedServerShutDownCleanlyIsNotStartedAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, logs := startLogged(t, ctx, false)
	pid := postmasterPid(t, data)
	again, ended := localpg.NextStart(c), localpg.WatchEnded(c)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil { // smart shutdown: exit status 0
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-again:
		t.Fatalf("the server (pid %d) shut down by SIGTERM was started again:\n%s", pid, logs.String())
	case <-ctx.Done():
		t.Fatalf("the watch did not end after the server (pid %d) was shut down by SIGTERM:\n%s", pid, logs.String())
	}
	if c.Started() {
		t.Error("the cluster says it runs the server that was shut down")
	}
	if pid, ok := localpg.RunningServer(data); ok {
		t.Errorf("server (pid %d) running after the owner's server was shut down", pid)
	}
	logged := logs.String()
	if strings.Contains(logged, "exited unexpectedly") || strings.Contains(logged, "level=ERROR") {
		t.Errorf("a clean shutdown was logged as an error:\n%s", logged)
	}
	var warned bool
	for _, l := range strings.Split(logged, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "shut down by someone else") && strings.Contains(l, "not started again") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning that the server was shut down and is not started again:\n%s", logged)
	}
	c.Stop() // nothing left to stop; must not hang or start anything
	if pid, ok := localpg.RunningServer(data); ok {
		t.Errorf("server (pid %d) running after Stop", pid)
	}
}
