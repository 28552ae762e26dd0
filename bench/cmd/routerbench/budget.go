package main

import (
	"fmt"
	"strings"
)

// writeThroughputBudget states, for an endpoint that missed the throughput
// target, what the target asks of the CPU: at 64 callers the router,
// PostgreSQL and the harness share a machine that is nearly saturated, so
// the busy CPU per second is about fixed, and a rate is a CPU cost per
// request. The first round's run (the one whose CPU split section 2 shows)
// is read: its busy CPU per request, and the cost per request that the same
// busy CPU allows at 50% of its direct run's rate. The cut is put in units
// of what the router and PostgreSQL spend, the parts the router can change.
func (b *Bench) writeThroughputBudget(m *md) {
	r := &b.rep
	direct, ok := r.row("direct", spec14Callers)
	if !ok || direct.RPS <= 0 {
		return
	}
	var parts []string
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, spec14Callers)
		if !ok || x.CPU == nil || !x.HaveCounter || x.N == 0 || x.RPS <= 0 || x.RPS >= 0.5*direct.RPS {
			continue
		}
		per := func(secs float64) float64 { return 1000 * secs / float64(x.N) }
		busy, router, pg, harness := per(x.CPU.Busy), 1000*x.PerJob.CPUSeconds, per(x.CPU.Postgres), per(x.CPU.Bench)
		target := 0.5 * direct.RPS
		allowed := busy * x.RPS / target
		parts = append(parts, fmt.Sprintf("`%s` spent %.2f ms of busy CPU per request at %.0f req/s (the router %.2f, PostgreSQL %.2f, load generator and mock %.2f); "+
			"the same busy CPU at 50%% of direct (%.0f req/s) allows %.2f ms: %.2f ms less, %.0f%% of what the router and PostgreSQL spend",
			ep, busy, x.RPS, router, pg, harness, target, allowed, busy-allowed, 100*(busy-allowed)/(router+pg)))
	}
	if len(parts) == 0 {
		return
	}
	m.p("What the throughput target asks of the CPU (the first round at %d callers, section 2's CPU split; the machine nearly saturated, so its busy CPU per second taken as fixed): %s.",
		spec14Callers, strings.Join(parts, "; "))
	m.p("")
}
