package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs list` fails when its table cannot be written (stdout on a
// full disk, a closed pipe), as --json does: before, the table's write error
// was dropped and it exited 0 with nothing listed.
func TestJobsListFailsWhenTheTableCannotBeWritten(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	jobIn(t, db, "acme", "k1", store.JobUnknown, store.AttemptUnknown)
	for _, args := range [][]string{{}, {"--json"}} {
		var code int
		stderr := withStdout(t, devFull(t), func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, args...))
		})
		if code != 1 || !strings.Contains(stderr, "no space left on device") {
			t.Errorf("jobs list %v to /dev/full: exit code %d, stderr %q; want 1, saying why", args, code, stderr)
		}
	}
}
