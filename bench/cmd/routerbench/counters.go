package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// RouterCounters are the router's own cumulative counters, read from its
// /metrics: the database work (router_db_*, see internal/metrics.DB for the
// definitions), the Go runtime's allocations and the process's CPU time.
type RouterCounters struct {
	RoundTrips, Statements, Transactions, DurableCommits float64
	Batches, BatchItems                                  float64 // router_db_batch_size, all kinds
	CommitWaitSeconds                                    float64 // router_db_commit_wait_seconds' sum, claims and wins
	Mallocs, AllocBytes                                  float64
	CPUSeconds                                           float64
}

// Sub is c minus o.
func (c RouterCounters) Sub(o RouterCounters) RouterCounters {
	return RouterCounters{
		RoundTrips: c.RoundTrips - o.RoundTrips, Statements: c.Statements - o.Statements,
		Transactions: c.Transactions - o.Transactions, DurableCommits: c.DurableCommits - o.DurableCommits,
		Batches: c.Batches - o.Batches, BatchItems: c.BatchItems - o.BatchItems, CommitWaitSeconds: c.CommitWaitSeconds - o.CommitWaitSeconds,
		Mallocs: c.Mallocs - o.Mallocs, AllocBytes: c.AllocBytes - o.AllocBytes, CPUSeconds: c.CPUSeconds - o.CPUSeconds,
	}
}

// Add sums counters (two replicas).
func (c RouterCounters) Add(o RouterCounters) RouterCounters {
	return RouterCounters{
		RoundTrips: c.RoundTrips + o.RoundTrips, Statements: c.Statements + o.Statements,
		Transactions: c.Transactions + o.Transactions, DurableCommits: c.DurableCommits + o.DurableCommits,
		Batches: c.Batches + o.Batches, BatchItems: c.BatchItems + o.BatchItems, CommitWaitSeconds: c.CommitWaitSeconds + o.CommitWaitSeconds,
		Mallocs: c.Mallocs + o.Mallocs, AllocBytes: c.AllocBytes + o.AllocBytes, CPUSeconds: c.CPUSeconds + o.CPUSeconds,
	}
}

// PerJob divides every counter by jobs.
func (c RouterCounters) PerJob(jobs int) RouterCounters {
	n := float64(max(jobs, 1))
	return RouterCounters{
		RoundTrips: c.RoundTrips / n, Statements: c.Statements / n, Transactions: c.Transactions / n,
		DurableCommits: c.DurableCommits / n, Batches: c.Batches / n, BatchItems: c.BatchItems / n, CommitWaitSeconds: c.CommitWaitSeconds / n,
		Mallocs: c.Mallocs / n, AllocBytes: c.AllocBytes / n, CPUSeconds: c.CPUSeconds / n,
	}
}

// MeanBatch is the mean number of items per batched statement (0: no batches).
func (c RouterCounters) MeanBatch() float64 {
	if c.Batches == 0 {
		return 0
	}
	return c.BatchItems / c.Batches
}

// Counters scrapes the router's /metrics.
func (p *RouterProc) Counters(ctx context.Context) (RouterCounters, error) {
	var c RouterCounters
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Ops+"/metrics", nil)
	if err != nil {
		return c, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c, fmt.Errorf("scrape %s/metrics: %w", p.Ops, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("scrape %s/metrics: %s", p.Ops, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return c, fmt.Errorf("parse %s/metrics: %w", p.Ops, err)
	}
	sum := func(name string) float64 {
		f, ok := fams[name]
		if !ok {
			return 0
		}
		v := 0.0
		for _, m := range f.GetMetric() {
			switch {
			case m.Counter != nil:
				v += m.Counter.GetValue()
			case m.Gauge != nil:
				v += m.Gauge.GetValue()
			case m.Untyped != nil:
				v += m.Untyped.GetValue()
			}
		}
		return v
	}
	if _, ok := fams["router_db_round_trips_total"]; !ok {
		return c, fmt.Errorf("%s/metrics has no router_db_round_trips_total: is the binary older than the database counters?", p.Ops)
	}
	c.RoundTrips = sum("router_db_round_trips_total")
	c.Statements = sum("router_db_statements_total")
	c.Transactions = sum("router_db_transactions_total")
	c.DurableCommits = sum("router_db_durable_commits_total")
	c.Mallocs = sum("go_memstats_mallocs_total")
	c.AllocBytes = sum("go_memstats_alloc_bytes_total")
	c.CPUSeconds = sum("process_cpu_seconds_total")
	if f, ok := fams["router_db_batch_size"]; ok {
		for _, m := range f.GetMetric() {
			c.Batches += float64(m.GetHistogram().GetSampleCount())
			c.BatchItems += m.GetHistogram().GetSampleSum()
		}
	}
	if f, ok := fams["router_db_commit_wait_seconds"]; ok {
		for _, m := range f.GetMetric() {
			c.CommitWaitSeconds += m.GetHistogram().GetSampleSum()
		}
	}
	return c, nil
}
