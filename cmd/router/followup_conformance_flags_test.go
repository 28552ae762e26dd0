package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run` with a flag value it cannot use — no provider at a
// time, a provider or prompt the configuration does not have — is a usage
// error: exit 2, a message naming the flag and what it accepts, and no run
// recorded. (A --concurrency of 0 ran with 4, and an unknown name exited 1,
// as a failed run does.)
func TestConformanceRunRefusesBadFlagValues(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: alpha\n    type: scripted\n  - name: beta\n    type: scripted")
	ctx := context.Background()
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--concurrency", "0"}, []string{"--concurrency", "1 or more"}},
		{[]string{"--concurrency", "-3"}, []string{"--concurrency", "1 or more"}},
		{[]string{"--provider", "nope"}, []string{"--provider nope", "alpha, beta"}},
		{[]string{"--provider", "alpha,nope"}, []string{"--provider nope", "alpha, beta"}},
		{[]string{"--prompt", "bogus"}, []string{"--prompt bogus", "invoice, triage"}},
	} {
		args := append([]string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t)}, c.flags...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		ok := code == 2 && stdout == ""
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				strings.Join(args, " "), code, stdout, stderr, c.want)
		}
	}
	var runs int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs").Scan(&runs); err != nil || runs != 0 {
		t.Fatalf("%d conformance runs recorded (%v), want none", runs, err)
	}
}
