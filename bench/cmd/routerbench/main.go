// Command routerbench measures the router against SPEC §14 in one run: the
// durable-commit floor of this disk, direct-to-mock against /v1/jobs and
// /v1/chat/completions at several caller counts (with the router's own
// round-trip and durable-commit counters per job), a CPU and allocation
// profile of the shipped binary through `router serve --debug-listen`, two
// router replicas on one database, a degraded primary under the route's
// default hedging, and a duplicate storm. It starts a loopback mock
// OpenAI-compatible provider and router processes (the binary built from
// ./cmd/router) with generated configurations, and writes report.md with PNG
// charts to bench/results/latest/; the run's full directory, profiles
// included, goes under .local/bench-runs/ (not in git).
//
// It needs DATABASE_URL; `make bench` runs it under `router localdb --durable`.
// Every loop is bounded in count and time, and all traffic is on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Options are the command's flags.
type Options struct {
	Out, RunsDir, Prompts, Scenarios string
	MaxRun                           time.Duration
	LogLevel                         string
	Webhooks                         bool

	FloorN, FloorCommits int
	WALSegments          int

	OverheadN, OverheadN1 int
	OverheadRounds        int
	OverheadLatency       time.Duration
	SustainedRounds       int
	Concurrency           []int

	ProfileFor     time.Duration
	ProfileCallers int

	ReplicaN, ReplicaCallers          int
	ReplicaDupKeys, ReplicaDupRepeats int

	DegradedN, DegradedCallers int
	Hang                       float64
	Median                     time.Duration
	Sigma                      float64
	PrimaryTimeout             time.Duration
	DegradedHedgeAfter         string

	StormKeys, StormRepeats, StormCallers int

	Compare       string // git revision the compare scenario measures this tree against
	CompareRounds int
	CompareChunks int
}

func main() {
	var o Options
	var conc string
	flag.StringVar(&o.Out, "out", filepath.Join("bench", "results", "latest"), "where report.md and the charts go (replaced by each run)")
	flag.StringVar(&o.RunsDir, "runs", filepath.Join(".local", "bench-runs"), "where each run's full directory (profiles included) goes, under its timestamp; keep it out of git")
	flag.StringVar(&o.Prompts, "prompts", "prompts", "prompts directory")
	flag.StringVar(&o.Scenarios, "scenarios", "floor,overhead,profile,replicas,degraded,storm,sustained,webhooks", "scenarios to run, comma-separated")
	flag.DurationVar(&o.MaxRun, "max-run", 30*time.Second, "time bound of any one load run")
	flag.StringVar(&o.LogLevel, "router-log-level", "info", "the routers' log level")
	flag.StringVar(&o.Compare, "compare", "", "git revision to measure this tree against, base and head alternating in one run (adds the compare scenario; make bench COMPARE=REV)")
	flag.IntVar(&o.CompareChunks, "compare-chunks", 1, "content chunks per streamed answer in the compare scenario (the mock streams the answer in this many pieces, as a provider streams tokens; 1: in one, as every other scenario)")
	flag.IntVar(&o.CompareRounds, "compare-rounds", 4, "pairs of runs of the compare scenario, one run of each side per pair; even, so that ABBA turns give both sides the same positions")
	flag.BoolVar(&o.Webhooks, "webhooks", false, "give the overhead scenario's owner a webhook (the mock takes its completion events), as an owner with webhooks runs")
	flag.IntVar(&o.WALSegments, "wal-segments", 40, "WAL segments to fill and recycle before measuring (a fresh cluster creates one every few seconds under load, stalling commits; a server in service recycles them)")
	flag.IntVar(&o.FloorN, "floor-n", 200, "measured commit sequences of the durable-commit floor")
	flag.IntVar(&o.FloorCommits, "floor-commits", 2, "durable commits per job on the path (SPEC §14)")
	flag.IntVar(&o.OverheadN, "overhead-n", 10000, "requests per run at more than one caller")
	flag.IntVar(&o.OverheadN1, "overhead-n1", 300, "requests per run at 1 caller")
	flag.IntVar(&o.OverheadRounds, "overhead-rounds", 3, "rounds of direct, jobs and chat at SPEC §14's 64 callers, in alternating order (the first is the caller sweep's); the throughput and p99 verdicts take the median over the rounds")
	flag.IntVar(&o.SustainedRounds, "sustained-rounds", 4, "rounds of the sustained scenario (each -overhead-n jobs at -profile-callers)")
	flag.DurationVar(&o.OverheadLatency, "overhead-latency", 20*time.Millisecond, "the mock's fixed latency in the overhead, profile and replica scenarios")
	flag.StringVar(&conc, "concurrency", "1,16,64,256", "caller counts of the overhead scenario (SPEC §14's targets are at 1 and 64)")
	flag.DurationVar(&o.ProfileFor, "profile-for", 10*time.Second, "CPU and allocation profile length")
	flag.IntVar(&o.ProfileCallers, "profile-callers", 64, "callers while profiling")
	flag.IntVar(&o.ReplicaN, "replica-n", 3000, "jobs of the two-replica run")
	flag.IntVar(&o.ReplicaCallers, "replica-callers", 64, "callers of the two-replica run")
	flag.IntVar(&o.ReplicaDupKeys, "replica-dup-keys", 100, "keys of the cross-replica duplicate burst")
	flag.IntVar(&o.ReplicaDupRepeats, "replica-dup-repeats", 4, "requests per key of the cross-replica duplicate burst")
	flag.IntVar(&o.DegradedN, "degraded-n", 1000, "jobs of the degraded-primary run")
	flag.IntVar(&o.DegradedCallers, "degraded-callers", 8, "callers of the degraded-primary run")
	flag.Float64Var(&o.Hang, "hang", 0.05, "fraction of primary calls that hang")
	flag.DurationVar(&o.Median, "provider-median", 50*time.Millisecond, "median provider latency (degraded and storm scenarios)")
	flag.Float64Var(&o.Sigma, "provider-sigma", 0.3, "log-normal sigma of the provider latency")
	flag.DurationVar(&o.PrimaryTimeout, "primary-timeout", 5*time.Second, "the primary's attempt timeout in the degraded scenario")
	flag.StringVar(&o.DegradedHedgeAfter, "degraded-hedge-after", "", "hedge_after of the degraded route (empty: the route's default)")
	flag.IntVar(&o.StormKeys, "storm-keys", 150, "distinct keys of the duplicate storm (per endpoint)")
	flag.IntVar(&o.StormRepeats, "storm-repeats", 16, "requests per key of the duplicate storm")
	flag.IntVar(&o.StormCallers, "storm-callers", 64, "callers of the duplicate storm")
	flag.Parse()
	for _, c := range strings.Split(conc, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(c), &n); err == nil && n > 0 {
			o.Concurrency = append(o.Concurrency, n)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute) // never runs unbounded
	defer cancel()
	if err := run(ctx, o); err != nil {
		log.Fatal("routerbench: ", err)
	}
}

func run(ctx context.Context, o Options) error {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return fmt.Errorf("DATABASE_URL is empty: run under `go run ./cmd/router localdb --durable -- …` (make bench does)")
	}
	began := time.Now()
	stamp := began.UTC().Format("20060102-150405")
	runDir := filepath.Join(o.RunsDir, stamp)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "routerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	prompts, err := filepath.Abs(o.Prompts)
	if err != nil {
		return err
	}
	log.Printf("building the router into %s", work)
	h := &Harness{Work: work, Prompts: prompts, DB: url, Bin: filepath.Join(work, "router"), LogLevel: o.LogLevel}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", h.Bin, "./cmd/router").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/router: %w\n%s", err, out)
	}
	h.Mock, err = StartMock(2 * time.Minute)
	if err != nil {
		return err
	}
	defer h.Mock.Close()
	db, err := openDB(ctx, url)
	if err != nil {
		return err
	}
	defer db.pool.Close()
	b := &Bench{o: o, h: h, db: db, c: newClient(), runID: fmt.Sprintf("%x", began.Unix()&0xffffff), dir: runDir}
	b.rep.Machine = machineInfo(ctx, db, fsyncDir())
	b.rep.Options = o
	if o.WALSegments > 0 {
		b.rep.WALWarm = db.warmWAL(ctx, o.WALSegments)
		log.Printf("WAL: %d segments filled and recycled in %s %s", b.rep.WALWarm.Segments, b.rep.WALWarm.Took.Round(time.Millisecond), b.rep.WALWarm.Err)
	}
	b.rep.Started = began
	want := map[string]bool{}
	for _, s := range strings.Split(o.Scenarios, ",") {
		want[strings.TrimSpace(s)] = true
	}
	if o.Compare != "" {
		want["compare"] = true
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"floor", b.floor}, {"overhead", b.overhead}, {"profile", b.profile},
		{"replicas", b.replicas}, {"degraded", b.degraded}, {"storm", b.storm}, {"sustained", b.sustained},
		{"webhooks", b.webhooks}, {"compare", b.compare},
	}
	for _, s := range steps {
		if !want[s.name] {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t := time.Now()
		log.Printf("scenario %s", s.name)
		if err := s.fn(ctx); err != nil {
			b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("%s: %v", s.name, err))
			log.Printf("scenario %s failed: %v", s.name, err)
		}
		log.Printf("scenario %s done in %s", s.name, time.Since(t).Round(time.Second))
	}
	b.rep.Elapsed = time.Since(began)
	if err := b.write(); err != nil {
		return err
	}
	// The committed copy: the report and its charts only (no profiles).
	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	if err := copyDir(runDir, o.Out, ".md", ".png"); err != nil {
		return err
	}
	log.Printf("report: %s (the run with its profiles: %s) after %s", filepath.Join(o.Out, "report.md"), runDir, b.rep.Elapsed.Round(time.Second))
	if len(b.rep.Problems) > 0 {
		return fmt.Errorf("%d problem(s); see the report", len(b.rep.Problems))
	}
	return nil
}

// Bench runs the scenarios and collects the report.
type Bench struct {
	o     Options
	h     *Harness
	db    *DB
	c     *Client
	runID string
	dir   string
	rep   Report
}

// owner makes a router name (and owner) unique to this run.
func (b *Bench) owner(name string) string { return name + "-" + b.runID }

// copyDir copies the files of src whose names end in one of exts into dst.
func copyDir(src, dst string, exts ...string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !hasExt(e.Name(), exts) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fsyncDir is where the disk's fdatasync time is measured: beside the bench's
// PostgreSQL data directory when it is there.
func fsyncDir() string {
	if st, err := os.Stat(".local"); err == nil && st.IsDir() {
		return ".local"
	}
	return "."
}

func hasExt(name string, exts []string) bool {
	for _, x := range exts {
		if strings.HasSuffix(name, x) {
			return true
		}
	}
	return false
}
