package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A --suites or --temperature that is given but blank (`--suites "$DIR"`
// with $DIR unset) is a usage error: exit 2, naming the flag and how to fix
// it, nothing on stdout and no run recorded. (--suites "" ran, billed and
// recorded the default suites; --temperature "" ran at each suite's own.)
// Found by review.
func TestConformanceRunRefusesBlankSuitesAndTemperature(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: alpha\n    type: scripted")
	ctx := context.Background()
	one := []string{"--provider", "alpha", "--prompt", "triage"}
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--suites", ""}, []string{`--suites "" names no directory`, "leave --suites out for the default (conformance/suites)"}},
		{[]string{"--suites="}, []string{`--suites "" names no directory`}},
		{[]string{"--suites", " "}, []string{`--suites " " names no directory`}},
		{[]string{"--suites", suitesDir(t), "--temperature", ""}, []string{`--temperature "" is not a number`, "0 to 2", "leave --temperature out"}},
		{[]string{"--suites", suitesDir(t), "--temperature= "}, []string{`--temperature " " is not a number`}},
	} {
		args := append(append([]string{"conformance", "run", "--config", cfg}, one...), c.flags...)
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
