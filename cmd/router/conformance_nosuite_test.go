package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// --prompt naming a loaded prompt that has no suite is told where to write
// it: the suites directory, as the table says for a prompt without a suite
// in a run of every prompt (it said "write invoice/suite.yaml", not where).
func TestConformanceRunPromptWithoutSuiteNamesTheSuitesDir(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: always-technical
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	dir := t.TempDir() // only triage has a suite
	if err := os.Symlink(filepath.Join(suitesDir(t), "triage"), filepath.Join(dir, "triage")); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", dir, "--prompt", "invoice"}, &out, &errOut)
	want := "prompt invoice@3 has no suite: write " + filepath.Join(dir, "invoice", "suite.yaml")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v; want it to say %q", err, want)
	}
	// A run of every prompt says the same place in its table.
	out.Reset()
	_ = conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", dir}, &out, &errOut)
	if !strings.Contains(out.String(), "prompt invoice@3 has no suite ("+filepath.Join(dir, "invoice", "suite.yaml")+")") {
		t.Fatalf("table:\n%s", out.String())
	}
}
