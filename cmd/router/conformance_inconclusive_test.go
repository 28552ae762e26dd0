package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A run during which the provider only answered overloaded (529) proves
// nothing: `router conformance run` records nothing, says inconclusive in
// the table and the JSON, and exits 1 with the command to rerun; the run
// recorded digests on every run it does record (the database refuses one
// without them).
func TestConformanceRunInconclusiveOnTransientErrorsExitsWithRerunAdvice(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: overloaded
    type: scripted
    max_retries: 0
    script:
      - status: 529`)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	err := conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}, &out, &errOut)
	if !errors.Is(err, errConformanceFailed) || !strings.Contains(err.Error(), "inconclusive") ||
		!strings.Contains(err.Error(), "rerun `router conformance run --provider overloaded --prompt triage`") {
		t.Fatalf("err = %v, want the run failed as inconclusive, with the command to rerun\n%s", err, out.String())
	}
	if table := out.String(); !strings.Contains(table, "INCONCLUSIVE: rerun") || strings.Contains(table, "FAIL") {
		t.Errorf("table:\n%s", table)
	}
	out.Reset()
	err = conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage", "--json"}, &out, &errOut)
	var rep struct {
		Passed  bool   `json:"passed"`
		Rerun   string `json:"rerun"`
		Results []struct {
			Inconclusive bool `json:"inconclusive"`
		} `json:"results"`
	}
	if !errors.Is(err, errConformanceFailed) || json.Unmarshal(out.Bytes(), &rep) != nil || rep.Passed || len(rep.Results) != 1 ||
		!rep.Results[0].Inconclusive || rep.Rerun != "router conformance run --provider overloaded --prompt triage" {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d runs stored (%v), want none", n, err)
	}
	if code := run(ctx, []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

// Every run `router conformance run` records has both digests: the prompt's
// content and the target's settings (a run without them would count for any,
// and the database refuses it: migration 0028).
func TestConformanceRunRecordsBothDigests(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: always-technical
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t)}, &out, &errOut); !errors.Is(err, errConformanceFailed) {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	var all, digested int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE prompt_digest ~ '^[0-9a-f]{64}$'
		AND target_digest ~ '^[0-9a-f]{64}$' AND NOT legacy) FROM conformance_runs`).Scan(&all, &digested); err != nil {
		t.Fatal(err)
	}
	if all == 0 || digested != all {
		t.Fatalf("%d of %d runs recorded with both digests, want all (and some)", digested, all)
	}
}
