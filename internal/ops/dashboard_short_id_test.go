package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The dashboard labels each recent job (and each failing delivery) with a
// short id, the part of the job id before its first '-'. Job ids are UUIDv7:
// that part is the top 32 bits of the creation time in milliseconds, the
// same for every job created within the same 65.5 s. Two jobs created one
// after the other — every job on a busy page — carry the same label, so an
// operator cannot tell them apart, nor find the one a tenant reports by the
// label. Found by review.
func TestDashboardShortJobIDsAreDistinct(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	var ids []string
	for i := range 2 {
		input := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		fp, _ := store.Fingerprint("op", "", "", input)
		j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: fmt.Sprintf("short-%d", i),
			Fingerprint: fp, Route: "default", Input: input})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	page := dashboardOf(t, db)
	label := func(id string) string {
		t.Helper()
		m := regexp.MustCompile(`<code title="` + regexp.QuoteMeta(id) + `">([^<]*)</code>`).FindStringSubmatch(jobOn(t, page, id))
		if m == nil {
			t.Fatalf("no label for job %s on the page", id)
		}
		return m[1]
	}
	a, b := label(ids[0]), label(ids[1])
	if a == b {
		t.Errorf("two jobs, %s and %s, are both labelled %q on the dashboard: the label names neither", ids[0], ids[1], a)
	}
}
