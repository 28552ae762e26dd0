package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// BenchmarkPathBatch measures what PostgreSQL spends on one batch of the
// success path's commits — k key claims and k wins in one transaction, as the
// store's group commit sends them — on a store of its own with one
// connection, batch after batch, warm. It reports the backend's CPU per batch
// and per job (from /proc/<pid>/schedstat: PostgreSQL must run on this
// machine), so that a batch's fixed cost (the settings, each statement's
// executor start-up, the commit) and its cost per job can be told apart:
//
//	go run ./cmd/router localdb --durable -- go test -run '^$' -bench PathBatch -benchtime 300x ./internal/store/
//
// PATHBATCH_SETUP_SQL, when set, is run on the benchmark's freshly migrated
// schema before the first batch, so that a change to the schema can be
// measured before a migration is written for it (an ablation: drop an index,
// drop a constraint, change a table's storage), for example
//
//	PATHBATCH_SETUP_SQL='DROP INDEX jobs_open_created' go run ./cmd/router localdb --durable -- go test ...
//
// The machine's speed drifts: compare variants in alternating runs, not one
// after the other (docs/performance.md, fourteenth session).
//
// Not run by make test (no -bench); docs/performance.md has its figures.
func BenchmarkPathBatch(b *testing.B) {
	for _, k := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) { benchPathBatch(b, k) })
	}
}

func benchPathBatch(b *testing.B, k int) {
	ctx := context.Background()
	db := testdb.New(b, store.Options{KeyRetention: time.Hour})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		b.Fatal(err)
	}
	store.ConfigurePool(cfg)
	cfg.MinConns, cfg.MaxConns = 1, 1 // one backend, whose CPU is the batch's
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if setup := os.Getenv("PATHBATCH_SETUP_SQL"); setup != "" {
		if _, err := pool.Exec(ctx, setup); err != nil {
			b.Fatalf("PATHBATCH_SETUP_SQL: %v", err)
		}
	}
	st := store.New(pool, store.Options{KeyRetention: time.Hour})
	var pid int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		b.Fatal(err)
	}
	if _, err := backendCPU(pid); err != nil {
		b.Skipf("PostgreSQL's backend is not a process of this machine: %v", err)
	}

	seq := 0
	newJobs := func(n int) []store.NewJob {
		njs := make([]store.NewJob, n)
		for i := range njs {
			seq++
			key := "bench-" + strconv.Itoa(seq)
			njs[i] = newJob(b, "acme", "triage", key, `{"subject":"nonce=`+key+`; cannot log in","body":"The reset link expired."}`)
			njs[i].First, njs[i].LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
		}
		return njs
	}
	// The jobs the batches win: claimed beforehand, 32 to a batch.
	var running []*store.Job
	for left := k * (b.N + 1); left > 0; left -= 32 {
		jobs, _, errs := st.ClaimOneBatch(ctx, newJobs(min(left, 32)))
		for i, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
			running = append(running, jobs[i])
		}
	}
	batch := func() {
		wins := make([]store.Completion, k)
		for i := range wins {
			wins[i] = winOf(running[0])
			running = running[1:]
		}
		created, claimErrs, won, winErrs := st.PathBatch(ctx, newJobs(k), wins)
		for i := range k {
			if claimErrs[i] != nil || !created[i] || winErrs[i] != nil || !won[i] {
				b.Fatalf("claim: created=%v err=%v; win: won=%v err=%v", created[i], claimErrs[i], won[i], winErrs[i])
			}
		}
	}
	batch() // warm: plans made, caches filled
	before, _ := backendCPU(pid)
	b.ResetTimer()
	for range b.N {
		batch()
	}
	b.StopTimer()
	after, _ := backendCPU(pid)
	perBatch := float64(after-before) / 1e6 / float64(b.N)
	b.ReportMetric(perBatch, "pg-ms/batch")
	b.ReportMetric(perBatch/float64(k), "pg-ms/job")
}

// backendCPU is the time process pid has run on a CPU, in nanoseconds.
func backendCPU(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0, fmt.Errorf("empty schedstat")
	}
	return strconv.ParseInt(f[0], 10, 64)
}
