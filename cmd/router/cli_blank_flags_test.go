package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A --config given but blank (`--config "$CFG"` with $CFG unset) is a usage
// error (exit 2) saying what to give, for every command that takes one: it
// exited 1 ("read config: open : no such file"), as a failure while running.
// Nothing is done. Found by review.
func TestBlankConfigIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"serve"},
		{"migrate"},
		{"keys", "create", "--owner", "acme"},
		{"keys", "list"},
		{"keys", "revoke", "1"},
		{"keys", "rotate-webhook-secret", "--owner", "acme"},
		{"jobs", "get", "0190c0de-0000-7000-8000-000000000000"},
		{"jobs", "list"},
		{"conformance", "run"},
	} {
		for _, blank := range []string{"", " "} {
			args := append(append([]string{}, args...), "--config", blank)
			var code int
			stdout, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
			want := commandPath(args) + `: --config "` + blank + `" names no file: give the path of the router's YAML configuration file`
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "leave --config out to read router.yaml") {
				t.Errorf("router %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, stdout, stderr, want)
			}
		}
	}
}

// An --owner given but blank (spaces) is said to be blank, exit 2, before
// the database is touched: `keys rotate-webhook-secret --owner " "` went to
// the database and exited 1 ("owner \" \" has no webhook"), and `keys create`
// called it an owner holding white space.
func TestBlankOwnerIsAUsageError(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "rotate-webhook-secret", "--owner", " "}, `router keys rotate-webhook-secret: --owner " " is blank: give the owner (tenant) whose webhook secret to rotate`},
		{[]string{"keys", "rotate-webhook-secret", "--owner", "\t"}, `router keys rotate-webhook-secret: --owner "\t" is blank`},
		{[]string{"keys", "rotate-webhook-secret", "--owner", ""}, `router keys rotate-webhook-secret: --owner is required`},
		{[]string{"keys", "create", "--owner", "  "}, `router keys create: --owner "  " is blank: give the owner (tenant) this key belongs to`},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), append(c.args, "--config", cfg)) })
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("router %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if keys, err := db.Store.ListAPIKeys(context.Background()); err != nil || len(keys) != 0 {
		t.Fatalf("keys %+v (%v), want none", keys, err)
	}
}
