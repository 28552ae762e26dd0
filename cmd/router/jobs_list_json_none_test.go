package main

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs list --json` with no job to list prints an empty JSON array,
// `[]`, not nothing: a script piping it to jq reads "no jobs", not a parse
// error. (The table's form prints nothing on stdout and says so on stderr:
// TestJobsListWithNoLiveJobSaysWhereEndedOnesAre.) Found by review.
func TestJobsListJSONWithNoJobPrintsAnEmptyArray(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	jobIn(t, db, "acme", "ended", store.JobFailed, store.AttemptFailed) // ended: not listed
	jobIn(t, db, "acme", "live", store.JobRunning, store.AttemptRunning)
	for _, args := range [][]string{
		{"--state", "unknown"},
		{"--owner", "globex"},
		{"--state", "pending", "--owner", "acme"},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--json", "--config", cfg}, args...))
		})
		if code != 0 || stdout != "[]\n" {
			t.Errorf("jobs list --json %v with no matching job: exit %d, stdout %q, stderr %q; want exit 0 and stdout \"[]\\n\"", args, code, stdout, stderr)
		}
	}
}
