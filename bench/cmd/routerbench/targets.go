package main

import (
	"fmt"
	"math"
	"strings"
)

// spec14Callers is where SPEC §14 sets the throughput, p99 and per-job targets.
const spec14Callers = 64

// writeTargets states each SPEC §14 target with what this run measured.
func (b *Bench) writeTargets(m *md) {
	r := &b.rep
	m.p("## SPEC §14 targets")
	m.p("")
	m.p("| target | measured | verdict |")
	m.p("|---|---|---|")
	row := func(target, measured, verdict string) { m.p("| %s | %s | %s |", target, measured, verdict) }
	direct, haveDirect := r.row("direct", spec14Callers)
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, spec14Callers)
		t := fmt.Sprintf("throughput: `%s` ≥ 50%% of direct at %d callers", ep, spec14Callers)
		if !ok || !haveDirect || direct.RPS == 0 {
			row(t, "not measured", "**not measured**")
			continue
		}
		ratio := x.RPS / direct.RPS
		measured := fmt.Sprintf("%.0f%% (%.0f vs %.0f req/s)", 100*ratio, x.RPS, direct.RPS)
		if rs := r.throughputRatios(ep); len(rs) > 1 {
			ratio = median(rs)
			measured = fmt.Sprintf("%.0f%%, the median of %d alternating rounds (%s; the first: %.0f vs %.0f req/s)", 100*ratio, len(rs), list(rs, pct), x.RPS, direct.RPS)
		}
		row(t, measured, verdict(ratio >= 0.5, fmt.Sprintf("missed by %.0f points", 100*(0.5-ratio))))
	}
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, spec14Callers)
		t := fmt.Sprintf("router-added p99 ≤ 20 ms at %d callers (`%s`)", spec14Callers, ep)
		if !ok || len(x.Added) == 0 {
			row(t, "not measured", "**not measured**")
			continue
		}
		p99 := x.Added.Q(.99)
		measured := fmt.Sprintf("%s ms", ms(p99))
		if ps := r.addedP99s(ep); len(ps) > 1 {
			p99 = median(ps)
			measured = fmt.Sprintf("%s ms, the median of %d alternating rounds (%s)", ms(p99), len(ps), list(ps, ms))
		}
		row(t, measured, verdict(p99 <= 20, fmt.Sprintf("missed: %.1f× the target", p99/20)))
	}
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, 1)
		t := fmt.Sprintf("router-added p50 ≤ durable-commit floor + 1 ms at 1 caller (`%s`)", ep)
		if !ok || len(x.Added) == 0 || r.Floor == nil {
			row(t, "not measured (needs the floor and overhead scenarios at 1 caller)", "**not measured**")
			continue
		}
		limit := r.Floor.OnPath.Q(.5) + 1
		p50 := x.Added.Q(.5)
		row(t, fmt.Sprintf("%s ms vs %s ms (floor %s + 1; back to back the commits cost %s%s)", ms(p50), ms(limit), ms(r.Floor.OnPath.Q(.5)), ms(r.Floor.Path.Q(.5)), ownCommits(r.Floor)),
			verdict(p50 <= limit, fmt.Sprintf("missed by %s ms", ms(p50-limit))))
	}
	anyDurable := false
	for _, x := range r.Overhead {
		anyDurable = anyDurable || x.PerJob.DurableCommits > 0
	}
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, spec14Callers)
		tc := fmt.Sprintf("≤ 2 durable commits per job, amortised, at %d callers (`%s`)", spec14Callers, ep)
		tr := fmt.Sprintf("≤ 4 database round trips per job, amortised, at %d callers (`%s`)", spec14Callers, ep)
		if !ok || !x.HaveCounter {
			row(tc, "not measured", "**not measured**")
			row(tr, "not measured", "**not measured**")
			continue
		}
		c := x.PerJob
		if anyDurable {
			row(tc, fmt.Sprintf("%.2f", c.DurableCommits), verdict(c.DurableCommits <= 2, fmt.Sprintf("missed by %.2f", c.DurableCommits-2)))
		} else {
			row(tc, "0 reported: `router_db_durable_commits_total` never moved (the store does not report its commits yet)", "**unverified**")
		}
		row(tr, fmt.Sprintf("%.2f", c.RoundTrips), verdict(c.RoundTrips <= 4, fmt.Sprintf("missed by %.2f", c.RoundTrips-4)))
	}
	if d := r.Degraded; d != nil {
		p99, extra := d.E2E.Q(.99), d.CallsPerJob-1
		t := "degraded (5% of primary calls hang): p99 ≤ hedge_after + fallback p99 + 10%, ≤ 10% extra provider calls"
		measured := fmt.Sprintf("p99 %s ms vs bound %s ms; %.1f%% extra calls", ms(p99), ms(d.Bound), 100*extra)
		switch {
		case math.IsNaN(d.Bound):
			row(t, measured, "**missed: no hedge was started (the route's default did not hedge)**")
		default:
			var why []string
			if p99 > d.Bound {
				why = append(why, fmt.Sprintf("p99 %.2f× the bound", p99/d.Bound))
			}
			if extra > 0.10 {
				why = append(why, fmt.Sprintf("%.1f%% extra calls", 100*extra))
			}
			row(t, measured, verdict(len(why) == 0, "missed: "+strings.Join(why, ", ")))
		}
	}
	bad := 0
	for _, l := range r.Problems {
		if strings.HasPrefix(l, "INTEGRITY") || strings.Contains(l, "more than one job id") {
			bad++
		}
	}
	row("zero duplicate jobs and zero double wins in every run",
		fmt.Sprintf("%d checks (routers and deployments) in the database, %d with a duplicate or double win", len(r.Integrity), bad),
		verdict(bad == 0 && len(r.Integrity) > 0, "MISSED"))
	m.p("")
	b.writeOwnCommitsReading(m)
	b.writeThroughputBudget(m)
	if r.Replicas != nil {
		m.p("Two replicas on one database: %.0f jobs/s at %d callers, %d duplicate keys, %d double wins (section 4).", r.Replicas.RPS, r.Replicas.Callers, r.Replicas.In.DupKeys, r.Replicas.In.DoubleWins)
		m.p("")
	}
}

func verdict(ok bool, miss string) string {
	if ok {
		return "**met**"
	}
	return "**" + miss + "**"
}

// ownCommits is the note on the 1-caller verdict of what the router's own two
// commits cost, timed like the floor (section 1), when they were measured.
func ownCommits(f *FloorResult) string {
	if len(f.Statements) == 0 {
		return ""
	}
	return fmt.Sprintf("; the router's own claim and win cost %s", ms(f.Statements.Q(.5)))
}

// writeOwnCommitsReading states the 1-caller target under its other reading:
// "the measured cost of the durable commits on the path" taken as the router's
// own claim and win (section 1) rather than trivial INSERTs. The verdict above
// keeps the stricter reading; this line is for whoever decides which one SPEC
// §14 means.
func (b *Bench) writeOwnCommitsReading(m *md) {
	r := &b.rep
	if r.Floor == nil || len(r.Floor.Statements) == 0 {
		return
	}
	own := r.Floor.Statements.Q(.5)
	var parts []string
	for _, ep := range []string{"chat", "jobs"} {
		x, ok := r.row(ep, 1)
		if !ok || len(x.Added) == 0 {
			continue
		}
		p50 := x.Added.Q(.5)
		word := "met"
		if p50 > own+1 {
			word = fmt.Sprintf("missed by %s ms", ms(p50-own-1))
		}
		parts = append(parts, fmt.Sprintf("`%s` %s ms vs %s ms, %s", ep, ms(p50), ms(own+1), word))
	}
	if len(parts) == 0 {
		return
	}
	m.p("The 1-caller target read with the router's own claim and win (section 1, %s ms) as the cost of the durable commits on the path instead of trivial INSERTs: %s. The verdicts above keep the stricter floor; SPEC §14 does not say which it means.",
		ms(own), strings.Join(parts, "; "))
	m.p("")
}
