package localpg

import (
	"os"
	"path/filepath"
	"testing"
)

// ClusterExists finds a cluster in the data directory, or where Start keeps
// one the server's user cannot reach, and nothing elsewhere.
func TestClusterExists(t *testing.T) {
	old := outsideRoot
	outsideRoot = t.TempDir()
	t.Cleanup(func() { outsideRoot = old })
	dir := filepath.Join(t.TempDir(), "pg")
	if ClusterExists(dir) {
		t.Fatalf("%s: a cluster found where none was made", dir)
	}
	mark := func(d string) {
		t.Helper()
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "PG_VERSION"), []byte("15\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kept := filepath.Join(keptDir(dir), "data")
	mark(kept)
	if !ClusterExists(dir) {
		t.Errorf("a cluster kept in %s (outside the project) not found for %s", kept, dir)
	}
	if err := os.RemoveAll(kept); err != nil {
		t.Fatal(err)
	}
	mark(dir)
	if !ClusterExists(dir) {
		t.Errorf("a cluster in %s not found", dir)
	}
}
