package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs list` lists only jobs that have not ended: with none, it says
// so and where the ended ones are, rather than "no job matches" on a
// database that holds ended jobs. Found by a newcomer walkthrough.
func TestJobsListWithNoLiveJobSaysWhereEndedOnesAre(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	jobIn(t, db, "acme", "ended-1", store.JobFailed, store.AttemptFailed)
	jobIn(t, db, "globex", "ended-2", store.JobFailed, store.AttemptFailed)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no job matches among the pending, running and unknown ones"},
		{[]string{"--state", "running"}, "no job matches among the running ones"},
		{[]string{"--owner", "acme"}, `no job of owner "acme" matches among the pending, running and unknown ones`},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, c.args...))
		})
		for _, want := range []string{c.want, "only jobs that have not ended", "GET /v1/jobs", "router jobs get ID"} {
			if code != 0 || stdout != "" || !strings.Contains(stderr, want) {
				t.Errorf("jobs list %v with only ended jobs: exit %d, stdout %q, stderr:\n%s\nwant exit 0, nothing listed and %q",
					c.args, code, stdout, stderr, want)
			}
		}
	}
}
