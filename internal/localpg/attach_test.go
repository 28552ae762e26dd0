package localpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// A second Start on a data directory whose server is running (a CLI command
// while `make run` serves) uses that server instead of failing on its lock
// file, and its Stop leaves the server to the process that started it.
func TestStartAttachesToARunningServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := tempDir(t)
	first, err := localpg.Start(ctx, localpg.Options{DataDir: dir + "/data"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Stop)
	second, err := localpg.Start(ctx, localpg.Options{DataDir: dir + "/data"})
	if err != nil {
		t.Fatalf("a second start on a running server's directory: %v", err)
	}
	if second.URL != first.URL {
		t.Fatalf("second URL %s, want the running server's %s", second.URL, first.URL)
	}
	second.Stop()
	conn, err := pgx.Connect(ctx, first.URL)
	if err != nil {
		t.Fatalf("the running server after the attached one stopped: %v", err)
	}
	conn.Close(ctx)
}
