package metrics_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The router_db_* counters are the jobs' database work: docs/operations.md
// says to divide them by router_jobs_settled_total for the work per job, and
// SPEC §14 measures round trips per job with them. The router's monitoring
// of itself ran on the same traced pool and was counted too — the
// collectors' reads at every scrape (router_breaker_replica_state,
// router_jobs_live), the operator endpoints' reads (GET /dashboard, GET
// /v1/providers), the breaker publisher's write every 5 s — so the counters
// grew with no job at all, with each scrape and each open dashboard. None of
// it is counted now; a job's statements still are. Found by review.
func TestMonitoringIsNotCountedAsDatabaseWork(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	d := metrics.NewDB()
	pool, err := store.Connect(ctx, db.URL, func(c *pgxpool.Config) { c.ConnConfig.Tracer = d.Tracer() })
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 2, OpenFor: time.Hour}}, breaker.Options{})
	defer set.Close()
	m := metrics.New(metrics.Options{Pool: pool, DB: d, Breakers: set, Replicas: st, ReplicaMaxAge: time.Minute, LiveJobs: st,
		NoProcessCollectors: true})
	srv := httptest.NewServer(ops.New(ops.Config{Metrics: m.Handler(), Providers: []string{"primary"}, Breakers: set, Replica: "r1",
		StaleAfter: time.Minute}, st, nil, nil))
	defer srv.Close()
	get := func(path string, want int) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	// readDB scrapes too: its own reads must not count either.
	unchanged := func(what string, run func()) {
		t.Helper()
		before := readDB(t, m)
		run()
		if after := readDB(t, m); after != before {
			t.Errorf("%s: round trips, statements, transactions went from %v to %v, want unchanged: it is monitoring, no job's database work",
				what, before, after)
		}
	}

	unchanged("10 scrapes of /metrics (the replicas' breaker states and the live jobs read at each)", func() {
		for range 10 {
			get("/metrics", http.StatusOK)
		}
	})
	// The scrapes read something: the collectors' reads succeeded.
	fams := scrape(t, m.Handler())
	for _, up := range []string{"router_breaker_replica_scrape_ok", "router_jobs_live_scrape_ok"} {
		if v := value(t, fams, up, nil); v != 1 {
			t.Fatalf("%s = %v: the collector's read failed, so the test proves nothing", up, v)
		}
	}
	pub := breaker.NewPublisher(set, st, breaker.PublisherOptions{Replica: "r1", Interval: time.Hour})
	unchanged("5 publications of the breaker states", func() {
		for range 5 {
			if err := pub.Publish(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
	unchanged("the publisher's run (publication, pruning, removal at stop)", func() {
		rctx, stop := context.WithCancel(ctx)
		published := make(chan error, 1)
		p := breaker.NewPublisher(set, st, breaker.PublisherOptions{Replica: "r2", Interval: time.Hour,
			Published: func(err error) { published <- err }})
		done := make(chan struct{})
		go func() { p.Run(rctx); close(done) }()
		if err := <-published; err != nil {
			t.Fatal(err)
		}
		stop()
		<-done
	})
	unchanged("5 loads of /dashboard and of /v1/providers", func() {
		for range 5 {
			get("/dashboard", http.StatusOK)
			get("/v1/providers", http.StatusOK)
		}
	})

	// A job's work on the same pool is counted.
	before := readDB(t, m)
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	if _, _, err := st.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "k", Fingerprint: fp, Route: "default", Input: input}); err != nil {
		t.Fatal(err)
	}
	after := readDB(t, m)
	if after.roundTrips <= before.roundTrips || after.statements <= before.statements || after.transactions <= before.transactions {
		t.Errorf("creating a job: round trips, statements, transactions went from %v to %v, want each to grow", before, after)
	}
}
