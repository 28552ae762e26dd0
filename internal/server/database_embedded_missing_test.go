package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A one-shot command with `database_url: embedded` run from a directory with
// no embedded database (not where `make run` runs) is refused, naming the
// directory: it used to initdb a new cluster there and report success on it.
// Where the cluster exists the command goes on using it (localpg.ClusterExists
// also finds one kept outside the project: TestClusterExists).
func TestCommandDatabaseRefusesAnEmbeddedDatabaseThatDoesNotExist(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := &config.Config{DatabaseURL: config.EmbeddedDatabase}
	pgDir := filepath.Join(dir, ".local", "pg")

	err := CommandDatabase(cfg)
	if err == nil || !strings.Contains(err.Error(), pgDir) || !strings.Contains(err.Error(), "make run") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("no cluster in %s: CommandDatabase = %v; want a refusal naming the directory, `make run` and DATABASE_URL", pgDir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".local")); !os.IsNotExist(err) {
		t.Errorf(".local was created (%v)", err)
	}

	writeClusterMarker(t, filepath.Join(pgDir, "PG_VERSION"))
	if err := CommandDatabase(cfg); err != nil {
		t.Errorf("cluster in %s: CommandDatabase = %v; want it used", pgDir, err)
	}
}

func writeClusterMarker(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("17\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
