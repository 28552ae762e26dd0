package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CeilingResult compares the router's saturated throughput with pgbench doing
// the same commits per job on the same database in the same run.
type CeilingResult struct {
	Callers             int
	Jobs, Errors        int
	RouterJobsPerSec    float64
	CommitsPerJob       float64 // pg_stat_database.xact_commit delta / jobs (everything the router committed)
	WALSyncsPerJob      float64
	ScriptWrites        int // write transactions per pgbench "job"
	ScriptReads         int // read-only statements per pgbench "job"
	ScriptSource        string
	PgbenchClients      int
	PgbenchJobsPerSec   float64
	PgbenchCommitsPerS  float64
	PgbenchLatencyMs    float64
	Ratio               float64
	PgbenchOutput       string
	PgbenchFallbackNote string
	Added               Dist
	E2E                 Dist
}

func (b *Bench) ceiling(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {}})
	p, err := b.h.Start(ctx, b.overheadSpec("ceiling"), false)
	if err != nil {
		return err
	}
	defer p.Stop()
	closedLoop(ctx, 8, 200, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("cwarm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	c0, err := b.db.counters(ctx, 11*time.Second)
	if err != nil {
		return err
	}
	prefix := "ceil-" + b.runID
	r := closedLoop(ctx, b.o.CeilingCallers, b.o.CeilingN, b.o.CeilingFor, func(ctx context.Context, i int) Sample {
		n := nonceFor(prefix, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	c1, err := b.db.counters(ctx, 11*time.Second)
	if err != nil {
		return err
	}
	d := c1.Sub(c0)
	res := &CeilingResult{Callers: r.Callers, Jobs: len(r.Samples), Errors: r.Errors(), RouterJobsPerSec: r.Throughput(),
		CommitsPerJob: float64(d.Commits) / float64(len(r.Samples)), WALSyncsPerJob: float64(d.WALSyncs) / float64(len(r.Samples)),
		PgbenchClients: b.o.PgbenchClients}
	row := b.overheadRow("jobs", r)
	res.Added, res.E2E = row.Added, row.E2E
	// The pgbench "job": the router's write transactions (each a durable commit)
	// and its read-only statements, from the profiling build's counts when it ran.
	if pr := b.rep.Profile; pr != nil {
		res.ScriptWrites = int(math.Round(pr.WriteCommitsPerJob))
		res.ScriptReads = int(math.Round(pr.CommitsPerJob - pr.WriteCommitsPerJob))
		res.ScriptSource = "the profiling build's statement counts"
	} else {
		res.ScriptWrites = int(math.Round(res.CommitsPerJob))
		res.ScriptSource = "pg_stat_database xact_commit per job (all counted as writes)"
	}
	res.ScriptWrites = max(res.ScriptWrites, 1)
	p.Stop() // the router must not compete with pgbench
	if err := b.pgbench(ctx, res); err != nil {
		return err
	}
	if res.PgbenchJobsPerSec > 0 {
		res.Ratio = res.RouterJobsPerSec / res.PgbenchJobsPerSec
	}
	b.rep.Ceiling = res
	log.Printf("  router %.0f jobs/s (%.1f commits/job, %.2f WAL syncs/job); pgbench %.0f jobs/s (%d writes + %d reads); ratio %.0f%%",
		res.RouterJobsPerSec, res.CommitsPerJob, res.WALSyncsPerJob, res.PgbenchJobsPerSec, res.ScriptWrites, res.ScriptReads, 100*res.Ratio)
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("ceiling", in)
	return nil
}

func pgbenchPath() string {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(m) > 0 {
		return m[len(m)-1]
	}
	return ""
}

// pgbenchScript is one "job": writes transactions shaped like the router's (an
// insert and an update of a row with an index, then commit) and reads
// autocommitted primary-key reads.
func pgbenchScript(writes, reads int) string {
	var s strings.Builder
	s.WriteString("\\set id random(1, 1000000000)\n")
	for i := range writes {
		fmt.Fprintf(&s, "BEGIN;\nINSERT INTO bench_jobs (id, step, payload) VALUES (:id, %d, '{\"state\":\"running\"}') ON CONFLICT (id, step) DO NOTHING;\n", i)
		fmt.Fprintf(&s, "UPDATE bench_jobs SET version = version + 1, payload = '{\"state\":\"succeeded\"}' WHERE id = :id AND step = %d;\nCOMMIT;\n", i)
	}
	for range reads {
		s.WriteString("SELECT version, payload FROM bench_jobs WHERE id = :id AND step = 0;\n")
	}
	return s.String()
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+)`)
var latRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)

func (b *Bench) pgbench(ctx context.Context, res *CeilingResult) error {
	if _, err := b.db.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_jobs (id bigint, step int, version bigint NOT NULL DEFAULT 0,
		payload jsonb, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id, step))`); err != nil {
		return err
	}
	bin := pgbenchPath()
	if bin == "" {
		res.PgbenchFallbackNote = "pgbench not found: the Go loop below ran the same script"
		return b.goBench(ctx, res)
	}
	script := filepath.Join(b.h.Work, "job.sql")
	if err := os.WriteFile(script, []byte(pgbenchScript(res.ScriptWrites, res.ScriptReads)), 0o644); err != nil {
		return err
	}
	secs := max(1, int(b.o.PgbenchFor/time.Second))
	cmd := exec.CommandContext(ctx, bin, "-n", "-M", "prepared", "-f", script, "-c", strconv.Itoa(b.o.PgbenchClients),
		"-j", "2", "-T", strconv.Itoa(secs), b.h.DB)
	out, err := cmd.CombinedOutput()
	res.PgbenchOutput = string(out)
	if err != nil {
		return fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	if m := tpsRe.FindStringSubmatch(string(out)); m != nil {
		res.PgbenchJobsPerSec, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := latRe.FindStringSubmatch(string(out)); m != nil {
		res.PgbenchLatencyMs, _ = strconv.ParseFloat(m[1], 64)
	}
	res.PgbenchCommitsPerS = res.PgbenchJobsPerSec * float64(res.ScriptWrites+res.ScriptReads)
	return nil
}
