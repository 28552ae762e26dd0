package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Report is everything one run measured.
type Report struct {
	Started        time.Time
	Elapsed        time.Duration
	Machine        Machine
	Options        Options
	Overhead       []OverheadRow
	Profile        *ProfileResult
	Ceiling        *CeilingResult
	FallbackDirect Dist
	Degraded       []DegradedRow
	Storm          []StormRow
	Integrity      []string // one line per checked router
	Problems       []string
}

func (r *Report) checkIntegrity(what string, in Integrity) {
	line := fmt.Sprintf("%s: %d jobs, %d keys, %d duplicate keys, %d double wins, %d attempts (%d hedges, %d lost, %d cancelled), %d unknown, %d failed",
		what, in.Jobs, in.Keys, in.DupKeys, in.DoubleWins, in.Attempts, in.Hedges, in.Lost, in.CancelledAt, in.Unknown, in.Failed)
	r.Integrity = append(r.Integrity, line)
	if in.DupKeys > 0 || in.DoubleWins > 0 {
		r.Problems = append(r.Problems, "INTEGRITY "+line)
	}
}

type md struct{ strings.Builder }

func (m *md) p(format string, a ...any) { fmt.Fprintf(m, format+"\n", a...) }

func (b *Bench) write() error {
	r := &b.rep
	var m md
	m.p("# Router benchmark — %s", r.Started.UTC().Format("2006-01-02 15:04 UTC"))
	m.p("")
	m.p("Written by `bench/cmd/routerbench` (`make bench`) in %s. SPEC §14 targets are checked at the end.", r.Elapsed.Round(time.Second))
	m.p("")
	mc := r.Machine
	m.p("## Machine")
	m.p("")
	m.p("- %d CPUs, %s, %s memory, Linux %s, %s", mc.CPUs, mc.CPUModel, mc.MemTotal, mc.Kernel, mc.Go)
	m.p("- %s", mc.Postgres)
	m.p("- PostgreSQL settings: %s", strings.Join(mc.SortedSettings(), ", "))
	m.p("- one 8 KiB write + fdatasync on the project's disk: median %s (the floor of one durable commit)", mc.FdatasyncMedian.Round(10*time.Microsecond))
	m.p("- router, PostgreSQL, the mock provider and the load generator share the machine; all traffic is loopback")
	m.p("")
	b.writeOverhead(&m)
	b.writeProfile(&m)
	b.writeCeiling(&m)
	b.writeDegraded(&m)
	b.writeStorm(&m)
	b.writeTargets(&m)
	m.p("## Integrity (from the database, per router)")
	m.p("")
	for _, l := range r.Integrity {
		m.p("- %s", l)
	}
	if len(r.Problems) > 0 {
		m.p("")
		m.p("## Problems")
		m.p("")
		for _, p := range r.Problems {
			m.p("- %s", p)
		}
	}
	m.p("")
	m.p("## Options")
	m.p("")
	m.p("```\n%+v\n```", r.Options)
	return os.WriteFile(filepath.Join(b.dir, "report.md"), []byte(m.String()), 0o644)
}

func (b *Bench) writeOverhead(m *md) {
	rows := b.rep.Overhead
	if len(rows) == 0 {
		return
	}
	m.p("## 1. Overhead")
	m.p("")
	m.p("The mock answers every call after a fixed %s. *Router-added* is, per request, the caller's end-to-end time minus the mock's own time for that call (SPEC §14's definition); for `direct` it is the loopback HTTP cost of the load generator itself (the measurement floor). Closed loop: each caller sends its next request when the previous one is answered. `jobs` is `POST /v1/jobs` with `Prefer: wait=60`; `chat` is `POST /v1/chat/completions`; each request has its own `Idempotency-Key`.", b.o.OverheadLatency)
	m.p("")
	m.p("| endpoint | callers | requests | errors | req/s | e2e p50 | e2e p99 | added p50 | added p90 | added p99 | added max |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		m.p("| %s | %d | %d | %d | %.0f | %s | %s | %s | %s | %s | %s |", r.Endpoint, r.Callers, r.N, r.Errors, r.RPS,
			ms(r.E2E.Q(.5)), ms(r.E2E.Q(.99)), ms(r.Added.Q(.5)), ms(r.Added.Q(.9)), ms(r.Added.Q(.99)), ms(r.Added.Q(1)))
	}
	m.p("")
	m.p("Latencies in milliseconds.")
	m.p("")
	// Charts.
	var cdf []Series
	var legend []string
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if r.Endpoint == "direct" || len(r.Added) == 0 {
			continue
		}
		s := Series{Name: fmt.Sprintf("%s, %d callers", r.Endpoint, r.Callers), Color: palette[len(cdf)%len(palette)], Points: cdfPoints(r.Added)}
		lo, hi = math.Min(lo, math.Max(r.Added.Q(0), 0.05)), math.Max(hi, r.Added.Q(1))
		cdf = append(cdf, s)
		legend = append(legend, fmt.Sprintf("%d %s = %s", len(cdf), colourNames[(len(cdf)-1)%len(colourNames)], s.Name))
	}
	if len(cdf) > 0 {
		if err := drawChart(filepath.Join(b.dir, "overhead-cdf.png"), msAxis(lo, hi), fracAxis(), cdf); err == nil {
			m.p("![router-added latency CDF](overhead-cdf.png)")
			m.p("")
			m.p("Router-added latency, CDF (x: ms, log scale; y: fraction of requests). Lines: %s.", strings.Join(legend, "; "))
			m.p("")
		}
	}
	var tp []Series
	legend = nil
	top := 0.0
	for _, ep := range []string{"direct", "jobs", "chat"} {
		s := Series{Name: ep, Color: palette[len(tp)%len(palette)]}
		for _, r := range rows {
			if r.Endpoint == ep {
				s.Points = append(s.Points, [2]float64{float64(r.Callers), r.RPS})
				top = math.Max(top, r.RPS)
			}
		}
		tp = append(tp, s)
		legend = append(legend, fmt.Sprintf("%d %s = %s", len(tp), colourNames[len(tp)-1], ep))
	}
	xa := Axis{Min: 1, Max: 100, Log: true}
	for _, c := range b.o.Concurrency {
		xa.Ticks, xa.Labels = append(xa.Ticks, float64(c)), append(xa.Labels, itoa(c))
		xa.Max = math.Max(xa.Max, float64(c)*1.5)
	}
	if err := drawChart(filepath.Join(b.dir, "throughput.png"), xa, linAxis(top*1.1), tp); err == nil {
		m.p("![throughput vs concurrency](throughput.png)")
		m.p("")
		m.p("Throughput vs concurrency (x: callers, log scale; y: requests per second). Lines: %s.", strings.Join(legend, "; "))
		m.p("")
	}
}

func (b *Bench) writeProfile(m *md) {
	p := b.rep.Profile
	if p == nil {
		return
	}
	m.p("## Profile of the hot path")
	m.p("")
	m.p("`bench/cmd/routerprof` (the serve wiring of `cmd/router` with the same packages, plus pprof and a statement-counting pgx tracer) served the overhead load on `/v1/jobs` with %d callers for %s: %d jobs, %.0f jobs/s, router-added p50 %s ms, p99 %s ms.",
		p.Callers, b.o.ProfileFor, p.Jobs, p.RPS, ms(p.Added.Q(.5)), ms(p.Added.Q(.99)))
	m.p("")
	m.p("- statements per job: **%.1f**; transactions (commits) per job: **%.1f**, of which **%.1f** write (each waits for a WAL flush)", p.StatementsPerJob, p.CommitsPerJob, p.WriteCommitsPerJob)
	m.p("- allocations per job: **%.0f** objects, **%.0f KiB**", p.MallocsPerJob, p.BytesPerJob/1024)
	m.p("")
	m.p("| statement (first 90 characters) | per job |")
	m.p("|---|---:|")
	for _, s := range p.ByStatement {
		if s.PerJob < 0.02 {
			continue
		}
		m.p("| `%s` | %.2f |", strings.ReplaceAll(s.SQL, "|", "\\|"), s.PerJob)
	}
	m.p("")
	m.p("CPU profile (`cpu.pprof`; `go tool pprof -top` flat, then cumulative):")
	m.p("")
	m.p("```\n%s\n```", p.CPUTop)
	m.p("")
	m.p("Allocation profile (`allocs.pprof`, alloc_space):")
	m.p("")
	m.p("```\n%s\n```", p.AllocTop)
	m.p("")
}

func (b *Bench) writeCeiling(m *md) {
	c := b.rep.Ceiling
	if c == nil {
		return
	}
	m.p("## 2. Ceiling: router vs pgbench")
	m.p("")
	m.p("The router ran `/v1/jobs` against an instant mock with %d callers: %d jobs (%d errors) at **%.0f jobs/s** (router-added p50 %s ms, p99 %s ms). PostgreSQL counted **%.1f commits per job** (`pg_stat_database.xact_commit` delta, background work included) and %.2f WAL fsyncs per job (group commit shares a flush).",
		c.Callers, c.Jobs, c.Errors, c.RouterJobsPerSec, ms(c.Added.Q(.5)), ms(c.Added.Q(.99)), c.CommitsPerJob, c.WALSyncsPerJob)
	m.p("")
	m.p("pgbench then ran a script shaped like one job — %d write transactions (insert + update of an indexed row, commit) and %d autocommitted primary-key reads, per %s — with %d clients (the router's pool size), `-M prepared`, for %s, on the same database: **%.0f jobs/s** (%.0f statements+commits/s, average latency %.2f ms per job).",
		c.ScriptWrites, c.ScriptReads, c.ScriptSource, c.PgbenchClients, b.o.PgbenchFor, c.PgbenchJobsPerSec, c.PgbenchCommitsPerS, c.PgbenchLatencyMs)
	if c.PgbenchFallbackNote != "" {
		m.p("(%s)", c.PgbenchFallbackNote)
	}
	m.p("")
	m.p("**Router throughput = %.0f%% of pgbench** for the same commits per job.", 100*c.Ratio)
	m.p("")
}

func (b *Bench) writeDegraded(m *md) {
	rows := b.rep.Degraded
	if len(rows) == 0 {
		return
	}
	m.p("## 3. Degraded primary")
	m.p("")
	m.p("Primary and fallback are the mock with log-normal latency (median %s, σ %.2f); the fallback measured directly: p50 %s, p95 %s, p99 %s ms. The primary's attempt timeout is %s; retries are off (`max_retries: 0`), so a 503 fails over at once where the route has a fallback. %d callers, %d jobs per variant after a healthy warm-up. End-to-end is until the job is terminal (for `sequential`, including the harness resolving the unknown attempt); a job that never succeeds counts as ∞. Provider calls include the hung ones.",
		b.o.Median, b.o.Sigma, ms(b.rep.FallbackDirect.Q(.5)), ms(b.rep.FallbackDirect.Q(.95)), ms(b.rep.FallbackDirect.Q(.99)), b.o.PrimaryTimeout, b.o.DegradedCallers, b.o.DegradedN)
	m.p("")
	m.p("| faults | variant | policy | ok/jobs | p50 | p99 | p99.9 | calls/job | hedges | SPEC bound |")
	m.p("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		bound := "–"
		if r.Bound > 0 {
			verdict := "met"
			if r.E2E.Q(.99) > r.Bound {
				verdict = "missed"
			}
			bound = fmt.Sprintf("%s (%s)", ms(r.Bound), verdict)
		}
		m.p("| %s | %s | %s | %d/%d | %s | %s | %s | %.3f | %d | %s |", r.ProviderFaults, r.Variant, r.Policy, r.OK, r.N,
			ms(r.E2E.Q(.5)), ms(r.E2E.Q(.99)), ms(r.E2E.Q(.999)), r.CallsPerJob, r.Hedges, bound)
	}
	m.p("")
	for _, mix := range []string{"issue", "spec"} {
		var cdf, tail []Series
		var legend []string
		lo, hi, n := math.Inf(1), 0.0, 0
		for _, r := range rows {
			if r.Mix != mix {
				continue
			}
			col := palette[len(cdf)%len(palette)]
			cdf = append(cdf, Series{Name: r.Variant, Color: col, Points: cdfPoints(r.E2E)})
			tail = append(tail, Series{Name: r.Variant, Color: col, Points: tailPoints(r.E2E)})
			legend = append(legend, fmt.Sprintf("%d %s = %s", len(cdf), colourNames[len(cdf)-1], r.Variant))
			lo = math.Min(lo, r.E2E.Q(0))
			for i := len(r.E2E) - 1; i >= 0; i-- {
				if !math.IsInf(r.E2E[i], 0) {
					hi = math.Max(hi, r.E2E[i])
					break
				}
			}
			n = max(n, len(r.E2E))
		}
		if len(cdf) == 0 {
			continue
		}
		faults := ""
		for _, r := range rows {
			if r.Mix == mix {
				faults = r.ProviderFaults
			}
		}
		x := msAxis(lo, hi)
		if drawChart(filepath.Join(b.dir, "degraded-"+mix+"-cdf.png"), x, fracAxis(), cdf) == nil &&
			drawChart(filepath.Join(b.dir, "degraded-"+mix+"-tail.png"), x, tailAxis(n), tail) == nil {
			m.p("![degraded %s CDF](degraded-%s-cdf.png)", mix, mix)
			m.p("")
			m.p("Primary with %s: end-to-end latency CDF (x: ms, log; y: fraction of jobs). Lines: %s.", faults, strings.Join(legend, "; "))
			m.p("")
			m.p("![degraded %s tail](degraded-%s-tail.png)", mix, mix)
			m.p("")
			m.p("The same as a tail plot (y: fraction of jobs slower than x, log scale; a line that stops above the bottom is the share of jobs that never succeeded).")
			m.p("")
		}
	}
}

func (b *Bench) writeStorm(m *md) {
	rows := b.rep.Storm
	if len(rows) == 0 {
		return
	}
	m.p("## 4. Duplicate storm")
	m.p("")
	m.p("Each key is sent %d times by concurrent callers (%d callers; repeats of a key are consecutive, so they overlap), then once more after its job finished. Provider latency median %s.",
		b.o.StormRepeats, b.o.StormCallers, b.o.Median)
	m.p("")
	m.p("| endpoint | keys | requests | errors | replayed | jobs | jobs per key | duplicate keys | keys answered with 2+ job ids | double wins | provider calls per job | p50 | p99 |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		m.p("| %s | %d | %d | %d | %d | %d | %.3f | %d | %d | %d | %.3f | %s | %s |", r.Endpoint, r.Keys, r.Requests, r.Errors, r.Replayed,
			r.Jobs, r.JobsPerKey, r.DupKeys, r.ClientSplit, r.DoubleWins, r.CallsPerJob, ms(r.E2E.Q(.5)), ms(r.E2E.Q(.99)))
	}
	m.p("")
}

// writeTargets checks SPEC §14.
func (b *Bench) writeTargets(m *md) {
	r := &b.rep
	m.p("## SPEC §14 targets")
	m.p("")
	m.p("| target | measured | verdict |")
	m.p("|---|---|---|")
	maxC := 0
	for _, c := range b.o.Concurrency {
		maxC = max(maxC, c)
	}
	for _, row := range r.Overhead {
		if row.Endpoint == "direct" || row.Callers != maxC {
			continue
		}
		p50, p99 := row.Added.Q(.5), row.Added.Q(.99)
		m.p("| router-added p50 ≤ 1 ms, p99 ≤ 5 ms at %d callers (%s) | p50 %s ms, p99 %s ms | %s |", maxC, row.Endpoint,
			ms(p50), ms(p99), verdict(p50 <= 1 && p99 <= 5, fmt.Sprintf("missed: p50 %.1f×, p99 %.1f× the target", p50/1, p99/5)))
	}
	if c := r.Ceiling; c != nil {
		m.p("| throughput ≥ 50%% of pgbench (same commits per job) | %.0f%% (%.0f vs %.0f jobs/s) | %s |", 100*c.Ratio, c.RouterJobsPerSec, c.PgbenchJobsPerSec,
			verdict(c.Ratio >= 0.5, fmt.Sprintf("missed by %.0f points", 100*(0.5-c.Ratio))))
	}
	for _, d := range r.Degraded {
		if d.Mix != "spec" || d.Bound == 0 {
			continue
		}
		p99 := d.E2E.Q(.99)
		extra := d.CallsPerJob - 1
		m.p("| 5%% of primary calls hang, %s: p99 ≤ %s ms, ≤ 10%% extra calls | p99 %s ms, %.1f%% extra calls | %s |", d.Variant, ms(d.Bound), ms(p99), 100*extra,
			verdict(p99 <= d.Bound && extra <= 0.10, fmt.Sprintf("missed (p99 %.2f× the bound, extra calls %.1f%%)", p99/d.Bound, 100*extra)))
	}
	dups, doubles := int64(0), int64(0)
	for _, l := range r.Problems {
		if strings.HasPrefix(l, "INTEGRITY") {
			dups++
		}
	}
	for _, s := range r.Storm {
		doubles += s.DoubleWins
	}
	m.p("| zero duplicate jobs and zero double wins in every run | %d routers with a duplicate or double win | %s |", dups, verdict(dups == 0 && doubles == 0, "MISSED"))
	m.p("")
}

func verdict(ok bool, miss string) string {
	if ok {
		return "**met**"
	}
	return "**" + miss + "**"
}
