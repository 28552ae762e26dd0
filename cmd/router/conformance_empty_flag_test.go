package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A --provider or --prompt that is given but names nothing (`--provider ""`,
// `--provider ","`, `--prompt " "`: what `--provider "$P"` becomes with $P
// unset) is a usage error: exit 2, naming the flag and what it may name, and
// no run recorded. (It was read as no filter at all and ran every target with
// every prompt: billing every provider and needing every provider's API key.)
// Found by review.
func TestConformanceRunRefusesEmptySelection(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: alpha\n    type: scripted\n  - name: beta\n    type: scripted")
	ctx := context.Background()
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--provider", ""}, []string{`--provider "" names no target`, "configured: alpha, beta", "leave --provider out"}},
		{[]string{"--provider", ","}, []string{`--provider "," names no target`, "configured: alpha, beta"}},
		{[]string{"--provider", " , "}, []string{`--provider " , " names no target`}},
		{[]string{"--provider=", "--prompt", "triage"}, []string{`--provider "" names no target`}},
		{[]string{"--prompt", " "}, []string{`--prompt " " names no prompt`, "invoice, triage", "leave --prompt out"}},
		{[]string{"--provider", "alpha", "--prompt", ""}, []string{`--prompt "" names no prompt`}},
	} {
		args := append([]string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t)}, c.flags...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		ok := code == 2 && stdout == ""
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("router %q: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				args, code, stdout, stderr, c.want)
		}
	}
	var runs int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs").Scan(&runs); err != nil || runs != 0 {
		t.Fatalf("%d conformance runs recorded (%v), want none", runs, err)
	}
}
