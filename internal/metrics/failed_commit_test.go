package metrics_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// router_db_durable_commits_total and router_db_batch_size count batches
// that committed: a claim the database refuses (a NUL in its input) commits
// nothing, and moves neither.
func TestFailedClaimIsNoDurableCommit(t *testing.T) {
	d := metrics.NewDB()
	db := testdb.New(t, store.Options{Observer: d})
	m := metrics.New(metrics.Options{DB: d, NoProcessCollectors: true})
	_, _, err := db.Store.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "triage",
		IdempotencyKey: "k1", Fingerprint: []byte("fp"), Route: "default", Input: json.RawMessage(`{"x":"\u0000"}`)})
	if err == nil {
		t.Fatal("precondition: the claim was expected to fail")
	}
	var n int
	if qerr := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs`).Scan(&n); qerr != nil || n != 0 {
		t.Fatalf("precondition: %d jobs (%v), want none committed", n, qerr)
	}
	fams := scrape(t, m.Handler())
	if got := value(t, fams, "router_db_durable_commits_total", nil); got != 0 {
		t.Errorf("router_db_durable_commits_total = %v after a claim that failed and committed nothing (err: %v), want 0", got, err)
	}
	if f, ok := fams["router_db_batch_size"]; ok {
		for _, mm := range f.GetMetric() {
			if c := mm.GetHistogram().GetSampleCount(); c != 0 {
				t.Errorf("router_db_batch_size %v: %d batches observed, want none (the only one failed)", mm.GetLabel(), c)
			}
		}
	}
}
