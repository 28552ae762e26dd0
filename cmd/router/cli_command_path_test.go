package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An error is prefixed with the command the user typed, subcommand included
// (`router keys create: …`), once; it said `router keys: …` for every keys
// subcommand, and so on. A missing or unknown subcommand is said under the
// command (`router keys: …`). Found by review.
func TestErrorsArePrefixedWithTheFullCommand(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	for _, c := range []struct {
		args   []string
		code   int
		prefix string
	}{
		{[]string{"keys", "create", "--config", cfg}, 2, "router keys create: --owner is required"},
		{[]string{"keys", "revoke", "x", "--config", cfg}, 2, `router keys revoke: "x" is not a key ID`},
		{[]string{"keys", "revoke", "424242", "--config", cfg}, 1, "router keys revoke: no stored key has ID 424242"},
		{[]string{"keys", "rotate-webhook-secret", "--owner", "nobody", "--config", cfg}, 1, `router keys rotate-webhook-secret: owner "nobody" has no webhook`},
		{[]string{"jobs", "list", "--state", "failed", "--config", cfg}, 2, `router jobs list: --state "failed"`},
		{[]string{"jobs", "get", "X", "--config", cfg}, 2, `router jobs get: "X" is not a job id`},
		{[]string{"jobs", "get", "0190c0de-0000-7000-8000-000000000000", "--config", cfg}, 1, "router jobs get: no job 0190c0de-0000-7000-8000-000000000000"},
		{[]string{"conformance", "run", "--provider", "nope", "--config", cfg}, 2, "router conformance run: --provider nope: not among"},
		{[]string{"migrate", "--config", t.TempDir() + "/none.yaml"}, 1, "router migrate: read config"},
		{[]string{"keys", "bogus"}, 2, `router keys: unknown subcommand "bogus"`},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), c.args) })
		head := c.prefix[:strings.Index(c.prefix, ":")+1] // said once: not `router keys: router keys create: …`
		if code != c.code || !strings.HasPrefix(stderr, c.prefix) || strings.Count(stderr, head) != 1 {
			t.Errorf("router %s: exit %d, stderr %q; want exit %d and stderr starting %q", strings.Join(c.args, " "), code, stderr, c.code, c.prefix)
		}
	}
}
