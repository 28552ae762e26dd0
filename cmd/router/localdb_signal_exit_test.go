package main

import (
	"context"
	"testing"
)

// `router localdb -- COMMAND` "exits with COMMAND's exit status" (its --help,
// docs/operations.md), and when a signal ended the command it exits 128 plus
// that signal, "as a shell reports it" — but only when localdb itself was
// told to stop. A command killed by a signal localdb never received (the
// kernel's OOM killer on `go test`, a test binary's SIGSEGV/SIGABRT, an
// operator's `kill -9` of the command) makes localdb exit 1, the status of
// "failed while running", so `make test` in CI reports 1 where a shell
// reports 137 (OOM) or 134 (abort), and a script cannot tell a crash from a
// failing test.
func TestLocalDBCommandKilledBySignalExits128PlusSignal(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://unused") // set: localdb runs the command as is, no server
	for _, c := range []struct {
		name, script string
		want         int
	}{
		{"SIGKILL (OOM killer)", `kill -KILL $$`, 137},
		{"SIGTERM", `kill -TERM $$`, 143},
		{"SIGABRT", `kill -ABRT $$`, 134},
	} {
		t.Run(c.name, func(t *testing.T) {
			var code int
			_, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"localdb", "--", "sh", "-c", c.script}) })
			if code != c.want {
				t.Errorf("`router localdb -- sh -c %q`: exit code %d (stderr %q); want %d, as a shell reports a command its signal ended",
					c.script, code, stderr, c.want)
			}
		})
	}
}
