// Command routerbench measures the router against SPEC §14: the latency it adds
// to healthy calls, its throughput against pgbench on the same database, the
// tail under a degraded primary (no failover, sequential failover, fixed and
// adaptive hedging) and a duplicate storm. It starts a loopback mock
// OpenAI-compatible provider and router processes with generated configurations,
// and writes bench/results/<timestamp>/report.md with PNG charts (copied to
// bench/results/latest/).
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
	Out, Prompts, Scenarios string
	MaxRun                  time.Duration

	OverheadN, OverheadN1 int
	OverheadLatency       time.Duration
	Concurrency           []int

	CeilingN, CeilingCallers int
	CeilingFor               time.Duration
	PgbenchFor               time.Duration
	PgbenchClients           int

	DegradedN, DegradedCallers int
	Hang, Status               float64
	Median                     time.Duration
	Sigma                      float64
	PrimaryTimeout             time.Duration
	HedgeAfter                 time.Duration
	HedgeMin                   time.Duration

	StormKeys, StormRepeats, StormCallers int

	ProfileFor     time.Duration
	ProfileCallers int
}

func main() {
	var o Options
	var conc string
	flag.StringVar(&o.Out, "out", "bench/results", "results directory (a timestamped run directory and latest/ go under it)")
	flag.StringVar(&o.Prompts, "prompts", "prompts", "prompts directory")
	flag.StringVar(&o.Scenarios, "scenarios", "overhead,profile,ceiling,degraded,storm", "scenarios to run, comma-separated")
	flag.DurationVar(&o.MaxRun, "max-run", 60*time.Second, "time bound of any one load run")
	flag.IntVar(&o.OverheadN, "overhead-n", 1500, "requests per overhead run at 16 and 64 callers")
	flag.IntVar(&o.OverheadN1, "overhead-n1", 300, "requests per overhead run at 1 caller")
	flag.DurationVar(&o.OverheadLatency, "overhead-latency", 20*time.Millisecond, "the mock's fixed latency in the overhead scenario")
	flag.StringVar(&conc, "concurrency", "1,16,64", "caller counts of the overhead scenario")
	flag.IntVar(&o.CeilingN, "ceiling-n", 6000, "jobs of the ceiling run")
	flag.IntVar(&o.CeilingCallers, "ceiling-callers", 64, "callers of the ceiling run")
	flag.DurationVar(&o.CeilingFor, "ceiling-for", 20*time.Second, "time bound of the ceiling run")
	flag.DurationVar(&o.PgbenchFor, "pgbench-for", 15*time.Second, "pgbench duration")
	flag.IntVar(&o.PgbenchClients, "pgbench-clients", 20, "pgbench clients (the router's pool size)")
	flag.IntVar(&o.DegradedN, "degraded-n", 1000, "jobs per degraded-primary variant")
	flag.IntVar(&o.DegradedCallers, "degraded-callers", 8, "callers of the degraded-primary scenario")
	flag.Float64Var(&o.Hang, "hang", 0.05, "fraction of primary calls that hang")
	flag.Float64Var(&o.Status, "status503", 0.05, "fraction of primary calls answered 503")
	flag.DurationVar(&o.Median, "provider-median", 50*time.Millisecond, "median provider latency (degraded and storm scenarios)")
	flag.Float64Var(&o.Sigma, "provider-sigma", 0.3, "log-normal sigma of the provider latency")
	flag.DurationVar(&o.PrimaryTimeout, "primary-timeout", time.Second, "the primary's attempt timeout (a hang becomes unknown after it)")
	flag.DurationVar(&o.HedgeAfter, "hedge-after", 150*time.Millisecond, "hedge_after of the fixed-hedging variant")
	flag.DurationVar(&o.HedgeMin, "hedge-min", 20*time.Millisecond, "hedge_min of the adaptive-hedging variant")
	flag.IntVar(&o.StormKeys, "storm-keys", 150, "distinct keys of the duplicate storm (per endpoint)")
	flag.IntVar(&o.StormRepeats, "storm-repeats", 16, "requests per key of the duplicate storm")
	flag.IntVar(&o.StormCallers, "storm-callers", 64, "callers of the duplicate storm")
	flag.DurationVar(&o.ProfileFor, "profile-for", 15*time.Second, "CPU profile length")
	flag.IntVar(&o.ProfileCallers, "profile-callers", 64, "callers while profiling")
	flag.Parse()
	for _, c := range strings.Split(conc, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(c), &n); err == nil && n > 0 {
			o.Concurrency = append(o.Concurrency, n)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute) // never runs unbounded
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
	runDir := filepath.Join(o.Out, stamp)
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
	h := &Harness{Work: work, Prompts: prompts, DB: url, Bin: filepath.Join(work, "router"), ProfBin: filepath.Join(work, "routerprof")}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", h.Bin, "./cmd/router").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/router: %w\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", h.ProfBin, "./bench/cmd/routerprof").CombinedOutput(); err != nil {
		log.Printf("profiling build failed, the profile is skipped: %v\n%s", err, out)
		h.ProfBin = ""
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
	b.rep.Started = began
	want := map[string]bool{}
	for _, s := range strings.Split(o.Scenarios, ",") {
		want[strings.TrimSpace(s)] = true
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"overhead", b.overhead}, {"profile", b.profile}, {"ceiling", b.ceiling},
		{"degraded", b.degraded}, {"storm", b.storm},
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
	latest := filepath.Join(o.Out, "latest")
	if err := os.RemoveAll(latest); err != nil {
		return err
	}
	if err := copyDir(runDir, latest); err != nil {
		return err
	}
	log.Printf("report: %s (also %s) after %s", filepath.Join(runDir, "report.md"), latest, b.rep.Elapsed.Round(time.Second))
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

func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
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
