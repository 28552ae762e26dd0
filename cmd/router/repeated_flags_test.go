package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A flag given twice is read as its last value, silently: the Go flag
// package's default. The router refuses the same mistake everywhere else — a
// YAML key written twice ("the router does not let a later copy silently
// override the first"), a query parameter given twice on the operator
// surface (400: "a typo … would otherwise list everything"), --owner/--state/
// --provider given but blank (exit 2). On the command line it means:
//   - `router keys create --owner acme --owner globex` (a wrapper script's
//     default owner plus the operator's) prints a key that authenticates as
//     globex — a credential for the wrong tenant, handed to acme;
//   - `router conformance run --provider p --provider q` tests, records and
//     reports q only, and exits 0 when q passes: p was never tested;
//   - `router jobs list --state running --state unknown` lists only the
//     unknown jobs, under a header that says nothing of running ones.
//
// Each should exit 2 naming the flag given twice, before anything is done.
func TestFlagGivenTwiceIsAUsageError(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted\n  - name: q\n    type: scripted")
	ctx := context.Background()
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--owner", []string{"keys", "create", "--owner", "acme", "--owner", "globex", "--config", cfg}},
		{"--owner", []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--owner", "globex", "--config", cfg}},
		{"--provider", []string{"conformance", "run", "--provider", "p", "--provider", "q", "--suites", suitesDir(t), "--config", cfg}},
		{"--state", []string{"jobs", "list", "--state", "running", "--state", "unknown", "--config", cfg}},
		{"--config", []string{"keys", "list", "--config", cfg, "--config", cfg + ".other"}},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, c.args) })
		if code != 2 || !strings.Contains(stderr, c.flag) {
			t.Errorf("router %s: exit %d, stdout %.120q, stderr %.200q; want exit 2 saying %s was given twice, nothing done",
				strings.Join(c.args, " "), code, stdout, strings.TrimSpace(stderr), c.flag)
		}
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		t.Errorf("a key was created for owner %s by `keys create --owner acme --owner globex`", k.Owner)
	}
}
