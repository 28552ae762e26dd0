package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// ProfileResult is what the profiling build of the router measured while it
// served the overhead load.
type ProfileResult struct {
	Callers            int
	Jobs               int
	RPS                float64
	StatementsPerJob   float64
	CommitsPerJob      float64
	WriteCommitsPerJob float64
	MallocsPerJob      float64
	BytesPerJob        float64
	ByStatement        []StatementCount
	CPUTop, AllocTop   string // go tool pprof -top output
	Added              Dist
}

// StatementCount is one statement's executions per job.
type StatementCount struct {
	SQL    string
	PerJob float64
}

type benchSnapshot struct {
	Statements   int64            `json:"statements"`
	Commits      int64            `json:"commits"`
	WriteCommits int64            `json:"write_commits"`
	ByStatement  map[string]int64 `json:"by_statement"`
	Mallocs      uint64           `json:"mallocs"`
	AllocBytes   uint64           `json:"alloc_bytes"`
}

func getJSON(ctx context.Context, url string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func fetch(ctx context.Context, url, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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

// profile runs the overhead load (jobs endpoint) against the profiling build and
// collects a CPU profile, an allocation profile and the statement counts.
func (b *Bench) profile(ctx context.Context) error {
	if b.h.ProfBin == "" {
		return fmt.Errorf("the profiling build is not available")
	}
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
	var before, after benchSnapshot
	if err := getJSON(ctx, p.Debug+"/debug/bench", &before); err != nil {
		return err
	}
	secs := int(b.o.ProfileFor / time.Second)
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
	if err := getJSON(ctx, p.Debug+"/debug/bench", &after); err != nil {
		return err
	}
	wg.Wait()
	jobs := float64(len(r.Samples))
	res := &ProfileResult{Callers: r.Callers, Jobs: len(r.Samples), RPS: r.Throughput(),
		StatementsPerJob:   float64(after.Statements-before.Statements) / jobs,
		CommitsPerJob:      float64(after.Commits-before.Commits) / jobs,
		WriteCommitsPerJob: float64(after.WriteCommits-before.WriteCommits) / jobs,
		MallocsPerJob:      float64(after.Mallocs-before.Mallocs) / jobs,
		BytesPerJob:        float64(after.AllocBytes-before.AllocBytes) / jobs,
		Added:              b.overheadRow("jobs", r).Added,
	}
	for sql, n := range after.ByStatement {
		if d := n - before.ByStatement[sql]; d > 0 {
			res.ByStatement = append(res.ByStatement, StatementCount{SQL: sql, PerJob: float64(d) / jobs})
		}
	}
	sort.Slice(res.ByStatement, func(i, j int) bool { return res.ByStatement[i].PerJob > res.ByStatement[j].PerJob })
	if cpuErr == nil {
		res.CPUTop = pprofTop(ctx, b.h.ProfBin, cpu, "-nodecount=35")
		res.CPUTop += "\n" + pprofTop(ctx, b.h.ProfBin, cpu, "-nodecount=30", "-cum")
	} else {
		b.rep.Problems = append(b.rep.Problems, "cpu profile: "+cpuErr.Error())
	}
	if allocErr == nil {
		res.AllocTop = pprofTop(ctx, b.h.ProfBin, allocs, "-sample_index=alloc_space", "-nodecount=25")
	} else {
		b.rep.Problems = append(b.rep.Problems, "alloc profile: "+allocErr.Error())
	}
	_ = os.WriteFile(filepath.Join(b.dir, "profile-cpu-top.txt"), []byte(res.CPUTop), 0o644)
	_ = os.WriteFile(filepath.Join(b.dir, "profile-alloc-top.txt"), []byte(res.AllocTop), 0o644)
	b.rep.Profile = res
	log.Printf("  profile: %d jobs %.0f/s, %.1f statements, %.1f commits (%.1f writing), %.0f allocations, %.0f KiB per job",
		res.Jobs, res.RPS, res.StatementsPerJob, res.CommitsPerJob, res.WriteCommitsPerJob, res.MallocsPerJob, res.BytesPerJob/1024)
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
