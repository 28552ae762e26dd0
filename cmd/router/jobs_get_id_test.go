package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs get` of an id not in the form the router gives (another
// spelling of a UUID, part of one, not one) says so and exits 2, the command
// line being wrong: it said "no job … in this database" with the retention
// note, sending the operator looking at retention for a job that may well be
// there under its real id. Found in review.
func TestJobsGetRefusesWhatIsNotAJobID(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	for _, id := range []string{
		"01A23B58-0D95-714D-B84D-99DABF56969C", // uppercase
		"01a23b58-0d95-714d-b84d",              // truncated
		"01a23b580d95714db84d99dabf56969c",     // no hyphens
		"not-a-uuid",
	} {
		var code int
		_, errOut := captureOutput(t, func() {
			code = run(context.Background(), []string{"jobs", "get", id, "--config", cfg})
		})
		want := `"` + id + `" is not a job id: job ids are lowercase UUIDs with hyphens`
		if code != 2 || !strings.Contains(errOut, want) || strings.Contains(errOut, "retention") {
			t.Fatalf("router jobs get %s: exit %d, %q; want exit 2 saying %q, and nothing of retention", id, code, errOut, want)
		}
	}
}
