package metrics_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// router_jobs_live counts the database's jobs that are not terminal, by
// state, at scrape time — the unknown ones above all, which wait for a
// resolution and never expire — and 0 for a state with none.
func TestLiveJobsGauge(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	mk := func(key string) string {
		input := json.RawMessage(`{"k":"` + key + `"}`)
		fp, _ := store.Fingerprint("op", "", "", input)
		j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: key, Fingerprint: fp, Route: "default", Input: input})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	mk("pending-1")
	for state, keys := range map[string][]string{"unknown": {"u1", "u2"}, "failed": {"f1"}} {
		for _, k := range keys {
			if _, err := db.Pool.Exec(ctx, `UPDATE jobs SET state = $2 WHERE id = $1`, mk(k), state); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := metrics.New(metrics.Options{NoProcessCollectors: true, LiveJobs: db.Store})
	fams := scrape(t, m.Handler())
	got := map[string]float64{}
	for _, s := range fams["router_jobs_live"].GetMetric() {
		got[s.GetLabel()[0].GetValue()] = s.GetGauge().GetValue()
	}
	if want := map[string]float64{"pending": 1, "running": 0, "unknown": 2}; len(got) != 3 || got["pending"] != 1 || got["running"] != 0 || got["unknown"] != 2 {
		t.Fatalf("router_jobs_live %v, want %v", got, want)
	}
	if ok := fams["router_jobs_live_scrape_ok"].GetMetric()[0].GetGauge().GetValue(); ok != 1 {
		t.Fatalf("router_jobs_live_scrape_ok %v, want 1", ok)
	}

	// A count that fails: the store's pool is closed, as a database that
	// cannot be reached leaves every query failing.
	pool, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	failing := metrics.New(metrics.Options{NoProcessCollectors: true, LiveJobs: store.New(pool, store.Options{})})
	fams = scrape(t, failing.Handler())
	if _, ok := fams["router_jobs_live"]; ok || fams["router_jobs_live_scrape_ok"].GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Fatal("a failed count is exposed as counts, or not flagged by router_jobs_live_scrape_ok 0")
	}
}
