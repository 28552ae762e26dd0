package localpg_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// The server a process started dying (killed, a crash) does not leave that
// process without a database: it logs an error naming the server log and
// starts the server again on the same port, so the URL it was given works
// again, with what was committed; its Stop then stops that server. An
// attached process got its server back, the owner (`make run`) served 503
// until restarted, saying nothing. Found by review.
func TestOwnedServerThatDiesIsStartedAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, logs := startLogged(t, ctx, true)
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	pid := postmasterPid(t, data)
	again := localpg.NextStart(c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-again:
	case <-ctx.Done():
		t.Fatalf("the server (pid %d) this process started was killed and not started again:\n%s", pid, logs.String())
	}
	conn, err = pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("connect to %s after the server was started again: %v\n%s", c.URL, err, logs.String())
	}
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 42 {
		t.Errorf("committed row after the server was started again: %d (%v)", v, err)
	}
	conn.Close(ctx)
	if !c.Started() {
		t.Error("the cluster started its server again but does not own it")
	}
	logged := logs.String()
	var exitLine string
	for _, l := range strings.Split(logged, "\n") {
		if strings.Contains(l, "level=ERROR") && strings.Contains(l, "exited unexpectedly") {
			exitLine = l
		}
	}
	if exitLine == "" || !strings.Contains(exitLine, data+".log") {
		t.Errorf("no error logged naming the server log %s.log when the server died:\n%s", data, logged)
	}

	c.Stop()
	if pid, ok := localpg.RunningServer(data); ok {
		t.Fatalf("server (pid %d) still running after Stop", pid)
	}
}

// Stop while the server is being started again (it died just before) stops
// it for good: nothing is started after Stop returns, and nothing runs.
func TestStopOfAnOwnedServerThatDiedStopsForGood(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	again := localpg.NextStart(c)
	if err := syscall.Kill(postmasterPid(t, data), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if pid, ok := localpg.RunningServer(data); ok {
		t.Fatalf("server (pid %d) running after Stop", pid)
	}
	select {
	case <-again: // started again before Stop: Stop stopped that one, as checked
	default:
	}
}

// postmasterPid is the pid the postmaster.pid of data names.
func postmasterPid(t *testing.T, data string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatalf("postmaster.pid of %s: %v", data, err)
	}
	return pid
}

// startLogged starts a cluster (durable or not) in a data directory of its
// own, logging to a buffer the test reads, and stops it at cleanup.
func startLogged(t *testing.T, ctx context.Context, durable bool) (c *localpg.Cluster, data string, logs *lockedBuffer) {
	t.Helper()
	logs = &lockedBuffer{}
	data = filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data, Durable: durable, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c, data, logs
}

// lockedBuffer is a bytes.Buffer a logger and a test may use at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
