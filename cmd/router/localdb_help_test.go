package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `router localdb --dir DIR help` is help, as for every other command; and a
// command that cannot be found is refused before DIR is deleted and a server
// started. localdb used to wipe DIR, run initdb and start PostgreSQL, and
// only then fail to run "help".
func TestLocalDBHelpOrUnknownCommandDoesNotActOnItsDirectory(t *testing.T) {
	unsetenv(t, "DATABASE_URL") // else localdb starts no server and touches no directory
	dir := filepath.Join(reachableDir(t), "pg")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"PG_VERSION", "keep-me"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("17\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(what string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(dir, "keep-me")); err != nil {
			t.Fatalf("%s deleted --dir (%v)", what, err)
		}
	}
	for _, args := range [][]string{{"help"}, {"--", "help"}, {"--help"}} {
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"localdb", "--dir", dir}, args...))
		})
		kept("router localdb --dir DIR " + strings.Join(args, " "))
		if code != 0 || !strings.Contains(stdout, "Usage: router localdb") {
			t.Errorf("localdb %q: exit code %d, stdout %q, stderr %q; want the help on stdout and exit 0", args, code, stdout, stderr)
		}
	}
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"localdb", "--dir", dir, "--", "no-such-command-xyz", "./..."})
	})
	kept("a misspelt command")
	if code != 2 || !strings.Contains(stderr, "no-such-command-xyz") || !strings.Contains(stderr, "nothing was started") {
		t.Errorf("misspelt command: exit code %d, stderr %q; want 2 naming it and saying nothing was started", code, stderr)
	}
}
