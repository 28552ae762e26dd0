package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCountersReadsTheRoutersMetrics: the database counters, the batch
// histogram (every kind) and the commit-wait histogram's sum (claims and wins)
// are read from /metrics as the router's metrics package writes them.
func TestCountersReadsTheRoutersMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# TYPE router_db_round_trips_total counter
router_db_round_trips_total 30
# TYPE router_db_durable_commits_total counter
router_db_durable_commits_total 12
# TYPE router_db_batch_size histogram
router_db_batch_size_bucket{kind="claim",le="+Inf"} 4
router_db_batch_size_sum{kind="claim"} 10
router_db_batch_size_count{kind="claim"} 4
router_db_batch_size_bucket{kind="win",le="+Inf"} 2
router_db_batch_size_sum{kind="win"} 6
router_db_batch_size_count{kind="win"} 2
# TYPE router_db_commit_wait_seconds histogram
router_db_commit_wait_seconds_bucket{kind="claim",le="+Inf"} 10
router_db_commit_wait_seconds_sum{kind="claim"} 0.25
router_db_commit_wait_seconds_count{kind="claim"} 10
router_db_commit_wait_seconds_bucket{kind="win",le="+Inf"} 10
router_db_commit_wait_seconds_sum{kind="win"} 0.5
router_db_commit_wait_seconds_count{kind="win"} 10
`)
	}))
	defer srv.Close()
	c, err := (&RouterProc{Ops: srv.URL}).Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.RoundTrips != 30 || c.DurableCommits != 12 || c.Batches != 6 || c.BatchItems != 16 {
		t.Errorf("counters %+v, want 30 round trips, 12 durable commits, 6 batches of 16 items", c)
	}
	if math.Abs(c.CommitWaitSeconds-0.75) > 1e-9 {
		t.Errorf("commit wait %v s, want 0.75 (claims and wins)", c.CommitWaitSeconds)
	}
	if got := c.PerJob(10).CommitWaitSeconds; math.Abs(got-0.075) > 1e-9 {
		t.Errorf("commit wait per job %v s, want 0.075", got)
	}
	// Runs subtract a scrape before from one after; two replicas add up.
	if got := c.Sub(RouterCounters{CommitWaitSeconds: 0.5}).CommitWaitSeconds; math.Abs(got-0.25) > 1e-9 {
		t.Errorf("commit wait after minus before %v s, want 0.25", got)
	}
	if got := c.Add(c).CommitWaitSeconds; math.Abs(got-1.5) > 1e-9 {
		t.Errorf("commit wait of two replicas %v s, want 1.5", got)
	}
}
