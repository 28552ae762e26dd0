package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// --provider a,a and --prompt x,x name each once: one row, one stored run.
func TestConformanceRunRepeatedNamesRunOnce(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: always-technical
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	err := conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t),
		"--provider", "always-technical, always-technical", "--prompt", "triage,triage"}, &out, &errOut)
	if !errors.Is(err, errConformanceFailed) {
		t.Fatalf("err = %v\n%s%s", err, out.String(), errOut.String())
	}
	if n := strings.Count(out.String(), "\nalways-technical "); n != 1 || !strings.Contains(out.String(), "1 of 1 failed") {
		t.Fatalf("%d rows for the provider, want 1:\n%s", n, out.String())
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs WHERE provider = 'always-technical'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d runs stored (%v), want 1", n, err)
	}
}
