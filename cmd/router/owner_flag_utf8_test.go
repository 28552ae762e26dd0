package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An --owner that cannot be an owner (not UTF-8: a Latin-1 tenant name from
// a script) is the command line's fault: `router keys create` refuses it
// with exit 2 (config.ValidateOwner), "nothing was done". `router jobs
// list`, `keys rotate-webhook-secret` and `keys forget-removed-webhook` send
// it to PostgreSQL instead and exit 1 with the driver's
// `ERROR: invalid byte sequence for encoding "UTF8": 0xff (SQLSTATE 22021)`
// — "the command failed while running" — after rotate/forget have already
// applied pending migrations (prepareSchema). The message names no flag and
// says nothing of what to do.
func TestOwnerFlagNotUTF8IsAUsageError(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	bad := "acme\xff"
	for _, args := range [][]string{
		{"keys", "create", "--owner", bad, "--config", cfg}, // the reference: exit 2 today
		{"jobs", "list", "--owner", bad, "--config", cfg},
		{"keys", "rotate-webhook-secret", "--owner", bad, "--config", cfg},
		{"keys", "forget-removed-webhook", "--owner", bad, "--config", cfg},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		if code != 2 || strings.Contains(stderr, "SQLSTATE") || !strings.Contains(stderr, "--owner") {
			t.Errorf("router %s: exit %d, stderr %q; want exit 2 naming --owner (not UTF-8), as `router keys create` says it, without a database error",
				strings.Join(args[:2], " "), code, strings.TrimSpace(stderr))
		}
	}
}
