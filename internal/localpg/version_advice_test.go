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

// A cluster made by another major version of PostgreSQL than the machine's
// does not start; the error says so and what to do (install that version,
// pg_upgrade), not merely to delete the data. Found by review.
func TestStartOfAnotherVersionsClusterSaysSo(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/lib/postgresql/14/bin/postgres"); err == nil {
		t.Skip("PostgreSQL 14 is installed: the cluster would start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if err := os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("14\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = localpg.Start(ctx, localpg.Options{DataDir: dir})
	if err == nil {
		c.Stop()
		t.Fatal("a cluster of PostgreSQL 14 started")
	}
	for _, want := range []string{"made by PostgreSQL 14", "install PostgreSQL 14", "pg_upgrade"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// A start uses the binaries of the version that made the cluster when that
// version is installed.
func TestBinDirForIsTheClustersVersion(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"14", "15"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "postgres"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer localpg.SetPGLibRoot(root)()
	for _, c := range []struct{ version, want string }{
		{"14\n", filepath.Join(root, "14", "bin")},
		{"13\n", "newest"}, // not installed
		{"", "newest"},     // no PG_VERSION: a new cluster
	} {
		data := t.TempDir()
		if c.version != "" {
			if err := os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte(c.version), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := localpg.BinDirFor(data, "newest"); got != c.want {
			t.Errorf("PG_VERSION %q: binaries of %s, want %s", c.version, got, c.want)
		}
	}
}
