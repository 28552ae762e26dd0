package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ProfileResult is what the shipped binary's own debug listener and counters
// showed while it served the /v1/jobs load.
type ProfileResult struct {
	Callers          int
	Jobs             int
	RPS              float64
	PerJob           RouterCounters
	CPUTop, AllocTop string // go tool pprof -top output
	Added            Dist
}

func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// profile runs `router serve --debug-listen` under the overhead load on
// /v1/jobs and collects a CPU profile, an allocation profile (both over the
// load) and the router's counters per job.
func (b *Bench) profile(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	p, err := b.h.Start(ctx, b.overheadSpec("profile"), true)
	if err != nil {
		return err
	}
	defer p.Stop()
	closedLoop(ctx, 4, 100, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("pwarm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	before, err := p.Counters(ctx)
	if err != nil {
		return err
	}
	secs := max(1, int(b.o.ProfileFor.Seconds()))
	cpu, allocs := filepath.Join(b.dir, "cpu.pprof"), filepath.Join(b.dir, "allocs.pprof")
	var wg sync.WaitGroup
	var cpuErr, allocErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		cpuErr = fetch(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.Debug, secs), cpu)
	}()
	go func() {
		defer wg.Done()
		allocErr = fetch(ctx, fmt.Sprintf("%s/debug/pprof/allocs?seconds=%d", p.Debug, secs), allocs)
	}()
	prefix := "prof-" + b.runID
	r := closedLoop(ctx, b.o.ProfileCallers, 1_000_000, b.o.ProfileFor, func(ctx context.Context, i int) Sample {
		n := nonceFor(prefix, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	after, err := p.Counters(ctx)
	if err != nil {
		return err
	}
	wg.Wait()
	summarised := time.Now()
	defer func() {
		log.Printf("  profile summaries (go tool pprof) took %s", time.Since(summarised).Round(time.Second))
	}()
	res := &ProfileResult{Callers: r.Callers, Jobs: len(r.Samples), RPS: r.Throughput(),
		PerJob: after.Sub(before).PerJob(len(r.Samples)), Added: b.overheadRow("jobs", r).Added}
	if cpuErr == nil {
		res.CPUTop = pprofTop(ctx, b.h.Bin, cpu, "-nodecount=35")
		res.CPUTop += "\n\n" + pprofTop(ctx, b.h.Bin, cpu, "-nodecount=30", "-cum")
	} else {
		b.rep.Problems = append(b.rep.Problems, "cpu profile: "+cpuErr.Error())
	}
	if allocErr == nil {
		res.AllocTop = pprofTop(ctx, b.h.Bin, allocs, "-sample_index=alloc_space", "-nodecount=25")
	} else {
		b.rep.Problems = append(b.rep.Problems, "alloc profile: "+allocErr.Error())
	}
	b.rep.Profile = res
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("profile", in)
	log.Printf("  profile: %d jobs %.0f/s; per job %.2f round trips, %.2f statements, %.2f transactions, %.2f durable commits, %.0f allocations, %.0f KiB, %.2f ms CPU",
		res.Jobs, res.RPS, res.PerJob.RoundTrips, res.PerJob.Statements, res.PerJob.Transactions, res.PerJob.DurableCommits,
		res.PerJob.Mallocs, res.PerJob.AllocBytes/1024, 1000*res.PerJob.CPUSeconds)
	return nil
}

func pprofTop(ctx context.Context, bin, prof string, args ...string) string {
	a := append([]string{"tool", "pprof", "-top"}, args...)
	a = append(a, bin, prof)
	out, err := exec.CommandContext(ctx, "go", a...).CombinedOutput()
	if err != nil {
		return "go tool pprof failed: " + err.Error() + "\n" + string(out)
	}
	return strings.TrimSpace(string(out))
}
