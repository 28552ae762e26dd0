package ops_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The dashboard reads its sections one after another under one 5 s budget.
// A read that waits — here conformance_runs held under an ACCESS EXCLUSIVE
// lock, as ALTER TABLE, VACUUM FULL or REINDEX hold it, the case the gate's
// failure cache is written for — spends the whole budget, and every section
// read after it fails with "context deadline exceeded": the page (a 503)
// shows no breaker, no job, no counter and no delivery, though none of those
// tables is locked. One slow read blanks the operator's whole view, when it
// needs it. Found by review.
func TestDashboardOneSlowSectionDoesNotBlankTheOthers(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "budget", Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"primary"},
		Conformance: ops.StoreConformance{Store: db.Store, MaxAge: time.Hour}}, db.Store, nil, nil))
	t.Cleanup(srv.Close)

	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE conformance_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	page := getPage(t, srv.URL+"/dashboard")
	_ = tx.Rollback(ctx)

	if !strings.Contains(page, `data-job="`+j.ID+`"`) {
		t.Errorf("the recent jobs are not shown while only conformance_runs is locked")
	}
	for _, section := range []string{"recent jobs:", "live jobs:", "counters:", "webhook deliveries:"} {
		if strings.Contains(page, "<div>"+section) {
			i := strings.Index(page, "<div>"+section)
			t.Errorf("section %q failed while only conformance_runs is locked: %.160s", section, page[i:])
		}
	}
}
