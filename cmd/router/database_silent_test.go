package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/testdb"
)

// A one-shot command on a database that accepts connections and never
// answers fails after the default connect timeout (10s), saying what to
// check: before, pgx waited for ever when the URL set no connect_timeout.
// (The 30s below only bounds a hang.)
func TestSilentDatabaseFailsAOneShotCommand(t *testing.T) {
	cfg := writeConfig(t, &testdb.DB{URL: testdb.SilentDatabase(t).URL}, "  - name: p\n    type: scripted")
	ctx, cancel := context.WithCancel(context.Background())
	done := testdb.RunAsync(t, cancel, func() error { return runKeys(ctx, []string{"list", "--config", cfg}) })
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not answer within 10s (connect_timeout)") || !strings.Contains(err.Error(), "connect_timeout=SECONDS") {
			t.Fatalf("got %v; want the database's silence and what to do", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30s later, on a database that never answers")
	}
}
