package localpg_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// A postmaster killed leaves its backends running for a while — one busy
// with a query until it next waits — attached to the server's shared
// memory, and postgres refuses to start beside them (two servers writing
// one data directory). The watch of the server's owner logs each refused
// start and tries again, later and later, until that backend is gone; then
// the server runs again at the same URL.
func TestServerIsNotStartedAgainBesideABackendOfTheKilledOne(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := &signalBuffer{wrote: make(chan struct{}, 1)}
	data := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	busy, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close(context.Background())
	var backend int
	if err := busy.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	queryDone := make(chan error, 1)
	go func() { // never waits, so never notices its postmaster gone
		_, err := busy.Exec(context.Background(), `SELECT count(*) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b`)
		queryDone <- err
	}()
	waitForQuery(ctx, t, c.URL, backend)

	again := localpg.NextStart(c)
	if err := syscall.Kill(postmasterPid(t, data), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), "is still in use") { // the watch's start refused, logged
		select {
		case <-logs.wrote:
		case <-again:
			t.Fatalf("the server was started again while a backend (pid %d) of the killed one still ran:\n%s", backend, logs.String())
		case <-ctx.Done():
			t.Fatalf("no refused start logged:\n%s", logs.String())
		}
	}
	if err := syscall.Kill(backend, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-queryDone
	select {
	case <-again:
	case <-ctx.Done():
		t.Fatalf("the server was not started again once the backend was gone:\n%s", logs.String())
	}
	connect(ctx, t, c.URL)
}

// waitForQuery waits until backend is running a query, as pg_stat_activity
// tells from another connection.
func waitForQuery(ctx context.Context, t *testing.T, url string, backend int) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var active bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active')`, backend).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the busy query did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// signalBuffer is a lockedBuffer that says, on wrote, that it was written to.
type signalBuffer struct {
	lockedBuffer
	wrote chan struct{}
}

func (b *signalBuffer) Write(p []byte) (int, error) {
	n, err := b.lockedBuffer.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}
