package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The compare scenario measures a performance change inside one run: the
// router built at another git revision (the base) and the router of this tree
// (the head) take the same load in turns, base and head alternating run by run
// (ABBA: base, head, head, base, …), so that the machine drifting during the
// run — a shared VM's speed moves by tens of percent within minutes — falls on
// both sides alike instead of on whichever ran second. Each side has a
// database of its own, created empty for this run, so neither runs on tables
// the other grew.

// CompareResult is the compare scenario's outcome.
type CompareResult struct {
	Base, Head string // what each side was built from
	Endpoint   string
	Callers, N int
	Chunks     int          // content chunks per streamed answer (1: the whole content in one)
	Runs       []CompareRun // in the order they ran
}

// CompareRun is one measured run of one side.
type CompareRun struct {
	Side string // "base" or "head"
	Row  OverheadRow
}

// compareOrder is which side runs when: rounds pairs in ABBA order, so a
// drift that is linear in time costs both sides the same.
func compareOrder(rounds int) []string {
	var order []string
	for i := range rounds {
		if i%2 == 0 {
			order = append(order, "base", "head")
		} else {
			order = append(order, "head", "base")
		}
	}
	return order
}

// buildBase builds the router of git revision rev into work, from a copy of
// that revision's tree (git archive: no worktree to clean up), and returns the
// binary, that revision's prompts directory and the revision's short hash.
func buildBase(ctx context.Context, rev, work string) (bin, prompts, short string, err error) {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", rev+"^{commit}").Output()
	if err != nil {
		return "", "", "", fmt.Errorf("-compare %q: not a git revision of this repository: %w", rev, err)
	}
	short = strings.TrimSpace(string(out))
	src := filepath.Join(work, "base-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", "", err
	}
	tar := filepath.Join(work, "base.tar")
	if out, err := exec.CommandContext(ctx, "git", "archive", "--format=tar", "-o", tar, short).CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("git archive %s: %w\n%s", short, err, out)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xf", tar, "-C", src).CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("unpack %s: %w\n%s", short, err, out)
	}
	bin = filepath.Join(work, "router-base")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/router")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("go build ./cmd/router at %s: %w\n%s", short, err, out)
	}
	return bin, filepath.Join(src, "prompts"), short, nil
}

// headDescription says what the head side is: this tree's commit, and whether
// the tree has changes that are not committed (they are measured too).
func headDescription(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "this tree"
	}
	d := "this tree at " + strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		d += " with uncommitted changes"
	}
	return d
}

// withDatabase is url naming database name instead of its own.
func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("DATABASE_URL %q: the compare scenario needs a postgres:// URL (it names a database of its own for each side)", raw)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// compare runs the compare scenario (routerbench -compare REV).
func (b *Bench) compare(ctx context.Context) error {
	if b.o.Compare == "" {
		return fmt.Errorf("the compare scenario needs -compare REV (the git revision to measure this tree against)")
	}
	if b.o.CompareRounds < 2 || b.o.CompareRounds%2 != 0 {
		return fmt.Errorf("-compare-rounds %d: want an even number, at least 2 (ABBA turns give both sides the same positions only in whole pairs of pairs)", b.o.CompareRounds)
	}
	bin, prompts, short, err := buildBase(ctx, b.o.Compare, b.h.Work)
	if err != nil {
		return err
	}
	base := short
	if !strings.HasPrefix(b.o.Compare, short) {
		base += " (" + b.o.Compare + ")"
	}
	res := &CompareResult{Base: base, Head: headDescription(ctx), Endpoint: "jobs",
		Callers: b.o.ProfileCallers, N: b.o.OverheadN, Chunks: len(splitContent(validTriage, b.o.CompareChunks))}
	b.rep.Compare = res
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency, Chunks: b.o.CompareChunks}})
	procs := map[string]*RouterProc{}
	for _, side := range []string{"base", "head"} {
		name := "cmp_" + b.runID + "_" + side
		if _, err := b.db.pool.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("create the %s side's database: %w", side, err)
		}
		defer func() {
			drop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if _, err := b.db.pool.Exec(drop, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
				log.Printf("compare: drop %s: %v", name, err)
			}
		}()
		h := *b.h
		if h.DB, err = withDatabase(b.h.DB, name); err != nil {
			return err
		}
		if side == "base" {
			h.Bin, h.Prompts = bin, prompts
		}
		p, err := h.Start(ctx, b.overheadSpec("compare-"+side), false)
		if err != nil {
			return fmt.Errorf("start the %s side: %w", side, err)
		}
		defer p.Stop()
		procs[side] = p
	}
	c := res.Callers
	for side, p := range procs { // warm each side's connections, statements and heap
		closedLoop(ctx, c, max(100, 4*c), b.o.MaxRun, func(ctx context.Context, i int) Sample {
			n := nonceFor("cmp-warm-"+side+"-"+b.runID, i)
			return b.c.Job(ctx, p, n, n, 0)
		})
	}
	for i, side := range compareOrder(b.o.CompareRounds) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p := procs[side]
		prefix := fmt.Sprintf("cmp-%s-%s-%d", b.runID, side, i)
		row := b.measure(ctx, p, "jobs", true, func() Run {
			return closedLoop(ctx, c, res.N, b.o.MaxRun, func(ctx context.Context, i int) Sample {
				nonce := nonceFor(prefix, i)
				return b.c.Job(ctx, p, nonce, nonce, 0)
			})
		})
		res.Runs = append(res.Runs, CompareRun{Side: side, Row: row})
		if row.Errors > 0 || row.TimedOut {
			b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("compare, run %d (%s): %d errors, timed out %t: its figures count failed requests", i+1, side, row.Errors, row.TimedOut))
		}
		log.Printf("  compare %s: jobs c=%d n=%d %.0f/s added p50 %s p99 %s ms, router %.2f ms/job", side, c, row.N, row.RPS,
			ms(row.Added.Q(.5)), ms(row.Added.Q(.99)), 1000*row.PerJob.CPUSeconds)
	}
	for side, p := range procs {
		p.Stop()
		db, err := withDatabase(b.h.DB, "cmp_"+b.runID+"_"+side)
		if err != nil {
			return err
		}
		in, err := integrityAt(ctx, db, p.Owner)
		if err != nil {
			return err
		}
		b.rep.checkIntegrity("compare, "+side, in)
	}
	return nil
}

// integrityAt reads owner's integrity from the database at url.
func integrityAt(ctx context.Context, url, owner string) (Integrity, error) {
	db, err := openDB(ctx, url)
	if err != nil {
		return Integrity{}, err
	}
	defer db.pool.Close()
	return db.integrity(ctx, owner)
}

// compareMetric is one measure of a run, for the medians.
type compareMetric struct {
	name  string
	value func(OverheadRow) (float64, bool)
}

var compareMetrics = []compareMetric{
	{"req/s", func(r OverheadRow) (float64, bool) { return r.RPS, r.RPS > 0 }},
	{"router-added p50 (ms)", func(r OverheadRow) (float64, bool) { return r.Added.Q(.5), len(r.Added) > 0 }},
	{"router-added p99 (ms)", func(r OverheadRow) (float64, bool) { return r.Added.Q(.99), len(r.Added) > 0 }},
	{"router CPU per job (ms)", routerPerJob},
	{"PostgreSQL CPU per job (ms)", pgPerJob},
	{"of it PostgreSQL's background processes (ms)", pgBackgroundPerJob},
	{"load generator + mock CPU per job (ms)", harnessPerJob},
	{"router CPU ÷ load generator + mock CPU", perHarness(routerPerJob)},
	{"PostgreSQL backends' CPU ÷ load generator + mock CPU", perHarness(pgBackendsPerJob)},
}

// pgBackendsPerJob is PostgreSQL's CPU per job without its background
// processes: the backends that ran the router's statements.
func pgBackendsPerJob(r OverheadRow) (float64, bool) {
	all, ok := pgPerJob(r)
	bg, _ := pgBackgroundPerJob(r)
	return all - bg, ok
}

// perHarness divides f's CPU per job by the harness's in the same run. The
// load generator and mock are the same code on both sides, so their CPU per
// job is a yardstick of how fast the machine ran each run: on this kind of
// shared VM every process's CPU per job moves by a quarter or more within
// minutes, together, and the ratio keeps a change of a few percent in the
// router's own work visible through that drift.
func perHarness(f func(OverheadRow) (float64, bool)) func(OverheadRow) (float64, bool) {
	return func(r OverheadRow) (float64, bool) {
		v, ok := f(r)
		h, hok := harnessPerJob(r)
		if !ok || !hok || h <= 0 {
			return 0, false
		}
		return v / h, true
	}
}

// median of xs (the mean of the middle two when even); NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// sideMedians is each metric's median over side's runs.
func (r *CompareResult) sideMedians(side string) []float64 {
	out := make([]float64, len(compareMetrics))
	for i, cm := range compareMetrics {
		var xs []float64
		for _, run := range r.Runs {
			if run.Side != side {
				continue
			}
			if v, ok := cm.value(run.Row); ok {
				xs = append(xs, v)
			}
		}
		out[i] = median(xs)
	}
	return out
}

// change formats head against base as a signed percentage.
func change(base, head float64) string {
	if base == 0 || math.IsNaN(base) || math.IsNaN(head) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*(head-base)/base)
}

func (b *Bench) writeCompare(m *md) {
	r := b.rep.Compare
	if r == nil {
		return
	}
	m.p("## 9. Before and after: %s against %s", r.Head, r.Base)
	m.p("")
	stream := ""
	if r.Chunks > 1 {
		stream = fmt.Sprintf(", streaming each answer's content in %d chunks (`-compare-chunks`; every other section streams it in one)", r.Chunks)
	}
	m.p("`/v1/%s` at %d callers, %d requests per run, the mock at its fixed latency%s: the router built at %s (*base*) and at %s (*head*), each on a database of its own created for this run, in turns (base, head, head, base, …; whole pairs of pairs, so both sides take the same positions) so that a steady drift of the machine during the run falls on both sides alike. Only this section compares two builds; every other section measures the head.", r.Endpoint, r.Callers, r.N, stream, r.Base, r.Head)
	m.p("")
	m.p("| run | side | req/s | errors | added p50 | added p99 | router CPU ms | PostgreSQL CPU ms | of it background | load generator + mock ms | busy |")
	m.p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, run := range r.Runs {
		x := run.Row
		m.p("| %d | %s | %.0f | %d | %s | %s | %s | %s | %s | %s | %s |", i+1, run.Side, x.RPS, x.Errors, ms(x.Added.Q(.5)), ms(x.Added.Q(.99)),
			cell(routerPerJob(x)), cell(pgPerJob(x)), cell(pgBackgroundPerJob(x)), cell(harnessPerJob(x)), busyShare(x))
	}
	m.p("")
	base, head := r.sideMedians("base"), r.sideMedians("head")
	m.p("Medians over each side's runs:")
	m.p("")
	m.p("| | base | head | head vs base |")
	m.p("|---|---:|---:|---:|")
	for i, cm := range compareMetrics {
		m.p("| %s | %s | %s | %s |", cm.name, num(base[i]), num(head[i]), change(base[i], head[i]))
	}
	m.p("")
	m.p("The load generator and mock are the same code on both sides: their CPU per job says how alike the two sides' machine was, and the last two rows measure the router's and PostgreSQL's backends' CPU per job in that unit, run by run, so that a drift of the machine's speed, which moves every process's CPU per job together, cancels out. PostgreSQL's background processes (checkpointer, WAL writer, autovacuum, the postmaster) work for both databases and whenever they are due: a burst of theirs lands in whichever run is active.")
	m.p("")
}

// num formats a median for the compare table.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
