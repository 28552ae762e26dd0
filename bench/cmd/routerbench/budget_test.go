package main

import (
	"strings"
	"testing"
)

// A run at 40% of direct on a saturated machine: 1.60 ms of busy CPU per
// request at 1,200 req/s allows 1.28 ms at 1,500 (half of direct's 3,000),
// 0.32 ms less: 25% of the router's and PostgreSQL's 1.28 ms. An endpoint
// that met the target gets no line.
func TestThroughputBudget(t *testing.T) {
	b := &Bench{}
	n := 10000
	b.rep.Overhead = []OverheadRow{
		{Endpoint: "direct", Callers: spec14Callers, N: n, RPS: 3000},
		{Endpoint: "jobs", Callers: spec14Callers, N: n, RPS: 1200, HaveCounter: true, PerJob: RouterCounters{CPUSeconds: 0.00080},
			CPU: &CPUSplit{Total: 20, Busy: 16, Postgres: 4.8, Bench: 3.2}},
		{Endpoint: "chat", Callers: spec14Callers, N: n, RPS: 1600, HaveCounter: true, PerJob: RouterCounters{CPUSeconds: 0.0007},
			CPU: &CPUSplit{Total: 20, Busy: 15, Postgres: 4, Bench: 3}},
	}
	var m md
	b.writeThroughputBudget(&m)
	out := m.String()
	reportHas(t, out, "`jobs` spent 1.60 ms of busy CPU per request at 1200 req/s (the router 0.80, PostgreSQL 0.48, load generator and mock 0.32); "+
		"the same busy CPU at 50% of direct (1500 req/s) allows 1.28 ms: 0.32 ms less, 25% of what the router and PostgreSQL spend")
	if strings.Contains(out, "`chat`") {
		t.Fatalf("chat met the target and still has a line:\n%s", out)
	}
}
