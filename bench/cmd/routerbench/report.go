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
	Started   time.Time
	Elapsed   time.Duration
	Machine   Machine
	WALWarm   WALWarm
	Options   Options
	Floor     *FloorResult
	Overhead  []OverheadRow
	Rounds    []OverheadRound // direct, jobs and chat at spec14Callers, round by round (overhead.go)
	Profile   *ProfileResult
	Replicas  *ReplicasResult
	Degraded  *DegradedResult
	Storm     []StormRow
	Sustained []SustainedRow
	Webhooks  *WebhooksResult
	Compare   *CompareResult
	Integrity []string // one line per checked router (or deployment)
	Problems  []string
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
	m.p("Written by `bench/cmd/routerbench` (`make bench`) in %s, every scenario in this one run. See docs/performance.md for how it is measured.", r.Elapsed.Round(time.Second))
	m.p("")
	b.writeTargets(&m)
	mc := r.Machine
	m.p("## Machine")
	m.p("")
	m.p("- %d CPUs, %s, %s memory, Linux %s, %s", mc.CPUs, mc.CPUModel, mc.MemTotal, mc.Kernel, mc.Go)
	m.p("- %s", mc.Postgres)
	m.p("- PostgreSQL settings: %s", strings.Join(mc.SortedSettings(), ", "))
	m.p("- one 8 KiB write + fdatasync on the project's disk: median %s", mc.FdatasyncMedian.Round(10*time.Microsecond))
	m.p("- router, PostgreSQL, the mock provider and the load generator share the machine; all traffic is loopback")
	writeWALWarm(&m, r.WALWarm)
	m.p("")
	b.writeFloor(&m)
	b.writeOverhead(&m)
	b.writeProfile(&m)
	b.writeReplicas(&m)
	b.writeDegraded(&m)
	b.writeStorm(&m)
	b.writeSustained(&m)
	b.writeWebhooks(&m)
	b.writeCompare(&m)
	m.p("## Integrity (from the database, per router or deployment)")
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

func (b *Bench) writeFloor(m *md) {
	f := b.rep.Floor
	if f == nil {
		return
	}
	m.p("## 1. Durable-commit floor")
	m.p("")
	m.p("On one connection to the bench's database with `synchronous_commit = %s`, sequences of %d autocommitted single-row INSERTs into a logged table (each commit waits for its WAL flush; nothing else runs in the statement): %d sequences back to back, the disk's best case, and %d sequences whose commits are %s apart, as a job's are on its path (the claim before the provider call, the win after it; on a machine that sat idle meanwhile a commit costs more: the database process and the disk are woken from idle). The latter is what the commits a job cannot avoid cost before any router work: **the floor**.", f.Setting, f.Commits, len(f.Path), len(f.OnPath), f.Gap)
	m.p("")
	m.p("| | p50 | p90 | p99 |")
	m.p("|---|---:|---:|---:|")
	m.p("| one durable commit | %s | %s | %s |", ms(f.One.Q(.5)), ms(f.One.Q(.9)), ms(f.One.Q(.99)))
	m.p("| %d durable commits, back to back | %s | %s | %s |", f.Commits, ms(f.Path.Q(.5)), ms(f.Path.Q(.9)), ms(f.Path.Q(.99)))
	m.p("| **%d durable commits, %s apart (the floor)** | **%s** | %s | %s |", f.Commits, f.Gap, ms(f.OnPath.Q(.5)), ms(f.OnPath.Q(.9)), ms(f.OnPath.Q(.99)))
	if len(f.Statements) > 0 {
		m.p("| the router's claim (key, job, first attempt) | %s | %s | %s |", ms(f.Claim.Q(.5)), ms(f.Claim.Q(.9)), ms(f.Claim.Q(.99)))
		m.p("| the router's win, %s after its claim | %s | %s | %s |", f.Gap, ms(f.Win.Q(.5)), ms(f.Win.Q(.9)), ms(f.Win.Q(.99)))
		m.p("| the router's claim + win | %s | %s | %s |", ms(f.Statements.Q(.5)), ms(f.Statements.Q(.9)), ms(f.Statements.Q(.99)))
	}
	m.p("")
	m.p("Milliseconds.")
	if len(f.Statements) > 0 {
		m.p("")
		m.p("The last three rows time the router's own two commits the same way (%d jobs through `internal/store` on a schema of their own in the same database, `synchronous_commit = on`, the claim right after the previous job's win, the win %s later), with no HTTP, no provider and no router around them.", len(f.Statements), f.Gap)
		if f.Commits == 2 {
			m.p("What the statements add to the floor's trivial INSERTs is part of what the 1-caller target's \"+ 1 ms\" has to hold: %s ms (the difference of the two medians).", ms(f.Statements.Q(.5)-f.OnPath.Q(.5)))
		}
	}
	m.p("")
}

func (b *Bench) writeOverhead(m *md) {
	rows := b.rep.Overhead
	if len(rows) == 0 {
		return
	}
	m.p("## 2. Throughput and router-added latency")
	m.p("")
	m.p("The mock answers every call after a fixed %s. *Router-added* is, per request, the caller's end-to-end time minus the mock's own time for that call (SPEC §14); for `direct` it is the loopback HTTP cost of the load generator itself. Closed loop: each caller sends its next request when the previous one is answered. `jobs` is `POST /v1/jobs` with `Prefer: wait=60`; `chat` is `POST /v1/chat/completions`; each request has its own `Idempotency-Key`. One router process serves every run.", b.o.OverheadLatency)
	m.p("")
	m.p("| endpoint | callers | requests | errors | req/s | %% of direct | e2e p50 | e2e p99 | added p50 | added p90 | added p99 | added max |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		pct := "–"
		if d, ok := b.rep.row("direct", r.Callers); ok && r.Endpoint != "direct" && d.RPS > 0 {
			pct = fmt.Sprintf("%.0f%%", 100*r.RPS/d.RPS)
		}
		timed := ""
		if r.TimedOut {
			timed = " (time bound)"
		}
		m.p("| %s | %d | %d%s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s |", r.Endpoint, r.Callers, r.N, timed, r.Errors, r.RPS, pct,
			ms(r.E2E.Q(.5)), ms(r.E2E.Q(.99)), ms(r.Added.Q(.5)), ms(r.Added.Q(.9)), ms(r.Added.Q(.99)), ms(r.Added.Q(1)))
	}
	m.p("")
	m.p("Latencies in milliseconds.")
	m.p("")
	b.writeRounds(m)
	m.p("Database work and cost per request, from the router's own `/metrics` (delta over the run divided by the requests; background work such as lease renewal included). Definitions: a round trip is one query or exec (BEGIN and COMMIT included), one whole batch, or one statement preparation; a durable commit waited for the WAL flush; *commit wait* is the time the job's claim and win waited for their durable commits, together (`router_db_commit_wait_seconds`: queued behind the batch in flight, then their own batch), in milliseconds.")
	m.p("")
	m.p("| endpoint | callers | round trips | statements | transactions | durable commits | mean batch | commit wait | allocations | KiB allocated | CPU ms |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.Endpoint == "direct" {
			continue
		}
		if !r.HaveCounter {
			m.p("| %s | %d | counters unavailable: %s ||||||||| ", r.Endpoint, r.Callers, r.CountersErr)
			continue
		}
		c := r.PerJob
		m.p("| %s | %d | %.2f | %.2f | %.2f | %.2f | %s | %.2f | %.0f | %.1f | %.2f |", r.Endpoint, r.Callers, c.RoundTrips, c.Statements,
			c.Transactions, c.DurableCommits, meanBatch(c), 1000*c.CommitWaitSeconds, c.Mallocs, c.AllocBytes/1024, 1000*c.CPUSeconds)
	}
	m.p("")
	m.p("Where the machine's CPU went, per request, over each run (`/proc`: the whole machine's busy time, PostgreSQL's processes, the bench's own process — load generator and mock — and the router's own counter above; *other* is the rest of the busy time: the kernel's threads and interrupts, the `router localdb` supervisor). When *busy* nears 100%% the throughput is bound by the sum, not by waiting.")
	m.p("")
	m.p("| endpoint | callers | busy | router ms | PostgreSQL ms | load generator + mock ms | other ms |")
	m.p("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.CPU == nil || r.N == 0 || r.CPU.Total <= 0 {
			continue
		}
		per := func(secs float64) string { return fmt.Sprintf("%.2f", 1000*secs/float64(r.N)) }
		router, other := "–", r.CPU.Busy-r.CPU.Postgres-r.CPU.Bench
		if r.HaveCounter {
			router = fmt.Sprintf("%.2f", 1000*r.PerJob.CPUSeconds)
			other -= r.PerJob.CPUSeconds * float64(r.N)
		}
		m.p("| %s | %d | %.0f%% | %s | %s | %s | %s |", r.Endpoint, r.Callers, 100*r.CPU.Busy/r.CPU.Total, router,
			per(r.CPU.Postgres), per(r.CPU.Bench), per(max(other, 0)))
	}
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
		if err := drawChart(filepath.Join(b.dir, "added-latency-cdf.png"), msAxis(lo, hi), fracAxis(), cdf); err == nil {
			m.p("![router-added latency CDF](added-latency-cdf.png)")
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
		m.p("![throughput vs callers](throughput.png)")
		m.p("")
		m.p("Throughput vs callers (x: callers, log scale; y: requests per second). Lines: %s.", strings.Join(legend, "; "))
		m.p("")
	}
}

func meanBatch(c RouterCounters) string {
	if c.Batches == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", c.MeanBatch())
}

func (b *Bench) writeProfile(m *md) {
	p := b.rep.Profile
	if p == nil {
		return
	}
	c := p.PerJob
	m.p("## 3. Profile of the shipped binary")
	m.p("")
	m.p("`router serve --debug-listen` (the binary of the other scenarios) served `/v1/jobs` with %d callers for %s while its debug listener recorded a CPU and an allocation profile: %d jobs, %.0f jobs/s, router-added p50 %s ms, p99 %s ms. Per job, from its `/metrics`: **%.2f round trips**, %.2f statements, %.2f transactions, **%.2f durable commits**, %.0f allocations (%.1f KiB), %.2f ms CPU.",
		p.Callers, b.o.ProfileFor, p.Jobs, p.RPS, ms(p.Added.Q(.5)), ms(p.Added.Q(.99)),
		c.RoundTrips, c.Statements, c.Transactions, c.DurableCommits, c.Mallocs, c.AllocBytes/1024, 1000*c.CPUSeconds)
	m.p("")
	m.p("The profiles (`cpu.pprof`, `allocs.pprof`) stay in the run's directory under `%s/` (not in git).", b.o.RunsDir)
	m.p("")
	m.p("CPU (`go tool pprof -top`, flat, then cumulative):")
	m.p("")
	m.p("```\n%s\n```", p.CPUTop)
	m.p("")
	m.p("Allocations (alloc_space):")
	m.p("")
	m.p("```\n%s\n```", p.AllocTop)
	m.p("")
}

func (b *Bench) writeReplicas(m *md) {
	r := b.rep.Replicas
	if r == nil {
		return
	}
	m.p("## 4. Two replicas on one database")
	m.p("")
	single := ""
	if one, ok := b.rep.row("jobs", r.Callers); ok && one.RPS > 0 {
		single = fmt.Sprintf(" (one router at %d callers: %.0f jobs/s)", r.Callers, one.RPS)
	}
	m.p("Two router processes of one deployment (one API key owner) on the same database; %d callers alternate between them on `/v1/jobs`, mock latency %s: %d jobs, %d errors, **%.0f jobs/s**%s, router-added p50 %s ms, p99 %s ms. Per job (both replicas' counters): %.2f round trips, %.2f durable commits.",
		r.Callers, b.o.OverheadLatency, r.N, r.Errors, r.RPS, single, ms(r.Added.Q(.5)), ms(r.Added.Q(.99)), r.PerJob.RoundTrips, r.PerJob.DurableCommits)
	m.p("")
	m.p("Then %d keys were each sent %d times at once, alternately to each replica: %d requests, %d errors, %d keys answered with more than one job id. In the database: %d jobs for %d keys, **%d duplicate keys, %d double wins**.",
		r.DupKeys, r.DupRepeats, r.DupRequests, r.DupErrors, r.ClientSplit, r.In.Jobs, r.In.Keys, r.In.DupKeys, r.In.DoubleWins)
	m.p("")
}

func (b *Bench) writeDegraded(m *md) {
	d := b.rep.Degraded
	if d == nil {
		return
	}
	m.p("## 5. Degraded primary")
	m.p("")
	m.p("%s. Primary and fallback are the mock with log-normal latency (median %s, σ %.2f); the fallback measured directly: p50 %s, p95 %s, p99 %s ms. %d callers, %d jobs after a healthy warm-up. End-to-end is until the answer; a job that did not succeed counts as ∞. Provider calls include the hung ones.",
		d.Policy, b.o.Median, b.o.Sigma, ms(d.FallbackDirect.Q(.5)), ms(d.FallbackDirect.Q(.95)), ms(d.FallbackDirect.Q(.99)), b.o.DegradedCallers, b.o.DegradedN)
	m.p("")
	m.p("| faults | ok/jobs | p50 | p99 | p99.9 | calls/job | hangs | hedges | hedge delay p50 (observed) | SPEC bound |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	m.p("| %s | %d/%d | %s | %s | %s | %.3f | %d | %d | %s | %s |", d.ProviderFaults, d.OK, d.N, ms(d.E2E.Q(.5)), ms(d.E2E.Q(.99)), ms(d.E2E.Q(.999)),
		d.CallsPerJob, d.Hangs, d.Hedges, ms(d.HedgeDelay.Q(.5)), ms(d.Bound))
	m.p("")
	m.p("The bound is (hedge delay + the fallback's direct p99) + 10%%, with the hedge delay observed in the database (each hedge attempt's creation minus its job's first attempt's), since the route's default delay is adaptive.")
	m.p("")
	if len(d.E2E) > 0 {
		lo, hi := d.E2E.Q(0), 0.0
		for i := len(d.E2E) - 1; i >= 0; i-- {
			if !math.IsInf(d.E2E[i], 0) {
				hi = d.E2E[i]
				break
			}
		}
		if hi > lo && drawChart(filepath.Join(b.dir, "degraded-cdf.png"), msAxis(lo, hi), fracAxis(),
			[]Series{{Name: "degraded", Color: palette[0], Points: cdfPoints(d.E2E)}}) == nil {
			m.p("![degraded CDF](degraded-cdf.png)")
			m.p("")
			m.p("End-to-end latency under the degraded primary, CDF (x: ms, log; y: fraction of jobs).")
			m.p("")
		}
	}
}

func (b *Bench) writeStorm(m *md) {
	rows := b.rep.Storm
	if len(rows) == 0 {
		return
	}
	m.p("## 6. Duplicate storm")
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
