package localpg_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// A first start stopped part-way (Ctrl-C during the first `make run`) leaves
// nothing that breaks the next start on the same directory. initdb used to
// run in the data directory itself and be killed: its PG_VERSION, written
// early, marked the half-built cluster as initialised, and every later start
// failed on it ("database postgres does not exist", or postgres exiting during
// start-up). The first start is cut as soon as initdb has written PG_VERSION
// (wherever it runs), then as soon as the data directory holds one. Found by
// review.
func TestStartAfterAnInterruptedFirstStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, watch string }{
		{"during initdb", "*/PG_VERSION"},       // the data directory or initdb's own
		{"once initialised", "data/PG_VERSION"}, // the data directory's
	} {
		parent := tempDir(t)
		dir := filepath.Join(parent, "data")
		ctx, cut := context.WithCancel(context.Background())
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for ctx.Err() == nil {
				if m, _ := filepath.Glob(filepath.Join(parent, c.watch)); len(m) > 0 {
					cut()
					return
				}
				time.Sleep(time.Millisecond) // polling the file system, where initdb's progress shows
			}
		}()
		first, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
		cut()
		<-watched
		if err == nil {
			first.Stop()
			t.Fatalf("%s: the first start finished before %s appeared", c.name, c.watch)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		again, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
		cancel()
		if err != nil {
			t.Fatalf("%s: the start after the first was cut: %v", c.name, err)
		}
		again.Stop()
		if m, _ := filepath.Glob(filepath.Join(parent, "*")); len(m) != 2 { // data and data.log
			t.Errorf("%s: beside the data directory after a good start: %v; want data and data.log only", c.name, m)
		}
	}
}

// A data directory that holds a cluster that does not start (one left
// half-built by an older router, which initialised in place) is not deleted,
// but the error says to delete it if it holds nothing needed.
func TestBrokenClusterErrorSaysToDeleteIt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(tempDir(t), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
	if err == nil {
		c.Stop()
		t.Fatal("a cluster of only PG_VERSION started")
	}
	if !strings.Contains(err.Error(), "rm -rf "+dir) {
		t.Errorf("error %q does not say to delete %s", err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		t.Errorf("the directory was changed: %v", err)
	}
}
