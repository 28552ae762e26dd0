package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A conformance run with no prompt loaded (prompts_dir empty: a volume not
// mounted, a wrong path) tested nothing: it fails (exit 1), naming
// prompts_dir. It used to exit 0 with "passed": true.
func TestConformanceRunWithNoPromptLoadedFails(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	empty := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	text := fmt.Sprintf("database_url: %q\nprompts_dir: %q\nlog: {level: error}\nproviders:\n  - {name: p, type: scripted, model: m}\nroutes:\n  default: {providers: [p]}\n",
		db.URL, empty)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--json"})
	})
	if code != 1 || !strings.Contains(stderr, "no prompt loaded from "+empty) || !strings.Contains(stderr, "prompts_dir") {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 1 and a message naming the empty prompts_dir", code, stdout, stderr)
	}
}
