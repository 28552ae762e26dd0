package main

import (
	"fmt"
	"strings"
)

// OverheadRound is one round of direct, jobs and chat at spec14Callers, in
// the order they ran. The first round is the caller sweep's own runs; the
// others (-overhead-rounds) alternate the order — direct, jobs, chat, then
// chat, jobs, direct, … — so that a steady drift of the machine's speed
// during the run, which moved throughput by a quarter within minutes on the
// shared VM (docs/performance.md), favours neither the router nor the
// baseline, and the SPEC §14 verdicts take each measure's median over rounds.
type OverheadRound struct {
	Order []string
	Rows  []OverheadRow // in Order
}

// roundOrder is the order of the endpoints in round i (from 0).
func roundOrder(i int) []string {
	if i%2 == 1 {
		return []string{"chat", "jobs", "direct"}
	}
	return []string{"direct", "jobs", "chat"}
}

// get is the round's row of ep.
func (r OverheadRound) get(ep string) (OverheadRow, bool) {
	for i, e := range r.Order {
		if e == ep && i < len(r.Rows) {
			return r.Rows[i], true
		}
	}
	return OverheadRow{}, false
}

// throughputRatios is, round by round, ep's req/s over direct's in that
// round (rounds missing either are left out).
func (r *Report) throughputRatios(ep string) []float64 {
	var out []float64
	for _, round := range r.Rounds {
		x, ok := round.get(ep)
		d, dok := round.get("direct")
		if ok && dok && d.RPS > 0 && x.N > 0 {
			out = append(out, x.RPS/d.RPS)
		}
	}
	return out
}

// addedP99s is, round by round, ep's router-added p99 in milliseconds.
func (r *Report) addedP99s(ep string) []float64 {
	var out []float64
	for _, round := range r.Rounds {
		if x, ok := round.get(ep); ok && len(x.Added) > 0 {
			out = append(out, x.Added.Q(.99))
		}
	}
	return out
}

// list formats xs with f, comma-separated.
func list(xs []float64, f func(float64) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = f(x)
	}
	return strings.Join(parts, ", ")
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// writeRounds lists the rounds at spec14Callers, for section 2.
func (b *Bench) writeRounds(m *md) {
	rounds := b.rep.Rounds
	if len(rounds) < 2 {
		return
	}
	m.p("At %d callers the three runs were repeated, %d rounds in all, in alternating order (the first round is the table's runs); the SPEC §14 throughput and p99 verdicts take the median over the rounds, each round's ratio against its own direct run:", spec14Callers, len(rounds))
	m.p("")
	m.p("| round | order | direct req/s | jobs req/s | jobs %% of direct | chat req/s | chat %% of direct | jobs added p99 | chat added p99 |")
	m.p("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for i, round := range rounds {
		d, _ := round.get("direct")
		j, _ := round.get("jobs")
		c, _ := round.get("chat")
		ratio := func(x OverheadRow) string {
			if d.RPS <= 0 || x.N == 0 {
				return "–"
			}
			return pct(x.RPS / d.RPS)
		}
		m.p("| %d | %s | %.0f | %.0f | %s | %.0f | %s | %s | %s |", i+1, strings.Join(round.Order, ", "), d.RPS, j.RPS, ratio(j), c.RPS, ratio(c),
			ms(j.Added.Q(.99)), ms(c.Added.Q(.99)))
	}
	m.p("")
}
