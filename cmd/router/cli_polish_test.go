package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router help COMMAND [SUBCOMMAND]` prints what `router COMMAND
// [SUBCOMMAND] --help` prints, not the general usage, and runs nothing.
func TestHelpCommandPrintsTheCommandsHelp(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"serve"}, {"migrate"}, {"localdb"}, {"keys", "create"}, {"keys", "revoke"},
		{"keys", "rotate-webhook-secret"}, {"keys", "forget-removed-webhook"}, {"jobs", "list"}, {"conformance", "run"},
	} {
		var wantOut, wantErr, gotOut, gotErr string
		var wantCode, gotCode int
		wantOut, wantErr = captureOutput(t, func() { wantCode = run(ctx, append(append([]string{}, args...), "--help")) })
		gotOut, gotErr = captureOutput(t, func() { gotCode = run(ctx, append([]string{"help"}, args...)) })
		if gotCode != 0 || gotErr != "" || gotOut != wantOut || wantCode != 0 || wantErr != "" || !strings.HasPrefix(wantOut, "Usage:") {
			t.Errorf("router help %s: exit code %d, stderr %q, stdout:\n%s\nwant exit code 0 and what `router %s --help` prints on stdout (stderr %q):\n%s",
				strings.Join(args, " "), gotCode, gotErr, gotOut, strings.Join(args, " "), wantErr, wantOut)
		}
	}
	// `router help` alone is the general usage.
	general, _ := captureOutput(t, func() { run(ctx, []string{"help"}) })
	if !strings.Contains(general, "Commands:") {
		t.Fatalf("router help: %s", general)
	}
}

// `router help` refuses an unknown command and a word it would otherwise
// pass on as an argument (localdb would run it), running nothing.
func TestHelpCommandRefusesWhatIsNotACommand(t *testing.T) {
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
		{[]string{"help", "localdb", "touch", marker}, "unexpected"},
		{[]string{"help", "serve", "--config", "x.yaml"}, "unexpected"},
		{[]string{"help", "keys", "nosuch"}, `unknown subcommand "nosuch"`},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, c.args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("`router help localdb touch` ran touch (%v)", err)
	}
}

// A bad `router jobs list` flag is said once as `router jobs list: ...`, not
// `router jobs list: router jobs list: ...`.
func TestJobsListErrorsArePrefixedOnce(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	for _, bad := range [][]string{{"--state", "failed"}, {"--limit", "0"}} {
		var code int
		_, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, bad...))
		})
		if code != 2 || strings.Count(stderr, "router jobs") != 1 || !strings.HasPrefix(stderr, "router jobs list: "+bad[0]) {
			t.Errorf("router jobs list %s: exit code %d, stderr %q; want exit code 2 and one prefix", strings.Join(bad, " "), code, stderr)
		}
	}
}

// Revoking a key that is revoked already says so (exit 0: the key is
// revoked, as asked), instead of reporting a new revocation.
func TestKeysRevokeAlreadyRevokedSaysSo(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	revoke := func() (int, string) {
		var code int
		stdout, _ := captureOutput(t, func() { code = run(ctx, []string{"keys", "revoke", fmt.Sprint(k.ID), "--config", cfg}) })
		return code, stdout
	}
	if code, out := revoke(); code != 0 || !strings.HasPrefix(out, fmt.Sprintf("revoked key %d (owner acme, prefix ", k.ID)) {
		t.Fatalf("first revoke: exit code %d, stdout %q", code, out)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("keys %+v (%v)", keys, err)
	}
	code, out := revoke()
	if code != 0 || strings.Contains(out, "revoked key") || !strings.Contains(out, fmt.Sprintf("key %d was already revoked", k.ID)) ||
		!strings.Contains(out, "nothing changed") {
		t.Fatalf("second revoke: exit code %d, stdout %q; want exit code 0 saying the key was already revoked", code, out)
	}
	if again, _ := db.Store.ListAPIKeys(ctx); !again[0].RevokedAt.Equal(*keys[0].RevokedAt) {
		t.Fatalf("the second revoke moved the revocation time from %s to %s", keys[0].RevokedAt, again[0].RevokedAt)
	}
}
