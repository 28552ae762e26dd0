package localpg_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// A start that keeps its data (`make run`) marks its data directory, and a
// Fresh one (`router localdb`) does not: localdb, which deletes and recreates
// its directory, refuses the marked one. Both are the router's own clusters.
// localdb used to delete `make run`'s demo database when given its directory.
func TestKeptStartMarksItsDataDirectory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kept, _, _ := startLogged(t, ctx, false)
	if !localpg.KeptData(kept.DataDir) || !localpg.MadeByRouter(kept.DataDir) {
		t.Errorf("a start that keeps its data: KeptData %v, MadeByRouter %v; want both true",
			localpg.KeptData(kept.DataDir), localpg.MadeByRouter(kept.DataDir))
	}
	fresh, err := localpg.Start(ctx, localpg.Options{DataDir: filepath.Join(tempDir(t), "data"), Fresh: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.Stop)
	if localpg.KeptData(fresh.DataDir) || !localpg.MadeByRouter(fresh.DataDir) {
		t.Errorf("a Fresh start: KeptData %v, MadeByRouter %v; want false, true",
			localpg.KeptData(fresh.DataDir), localpg.MadeByRouter(fresh.DataDir))
	}
}
