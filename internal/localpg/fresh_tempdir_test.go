package localpg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/localpg"
)

// As root, a Fresh start whose data directory the server's user cannot reach
// runs in a temporary directory (router-pg-*), which Stop removes. A start
// that failed — here stopped by a cancelled context, as Ctrl-C during
// initdb — left it behind, one more in the temporary directory for every
// failed start. Found by review.
func TestFreshUnreachableFailedStartLeavesNoTempDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only then is the data directory moved out of reach")
	}
	tmp, err := os.MkdirTemp("", "router-localpg-tmpdir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(t.TempDir(), "home") // before TMPDIR changes: not inside tmp
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp) // where the start makes its temporary directory
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C arriving while the start runs initdb: it cannot finish
	c, err := localpg.Start(ctx, localpg.Options{DataDir: filepath.Join(private, "pg"), Fresh: true})
	if err == nil {
		c.Stop()
		t.Fatal("the start finished despite the cancelled context")
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "router-pg-*"))
	if len(left) > 0 {
		t.Errorf("a failed fresh start (%v) left its temporary data directory behind: %v", err, left)
	}
}
