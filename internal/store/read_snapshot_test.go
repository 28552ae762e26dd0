package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// runningJobWithAttempt stores a running job of owner with one running
// attempt, and returns their ids.
func runningJobWithAttempt(t *testing.T, pool *pgxpool.Pool, owner string) (jobID, attemptID string) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `WITH j AS (
			INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
			VALUES (gen_random_uuid(), $1, 'triage', gen_random_uuid()::text, '\x00', '1', 'default', '{}', 'running')
			RETURNING id)
		INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, started_at)
		SELECT gen_random_uuid(), j.id, 1, 'primary', 'primary', 'running', 1, now() FROM j
		RETURNING job_id::text, id::text`, owner).Scan(&jobID, &attemptID)
	if err != nil {
		t.Fatal(err)
	}
	return jobID, attemptID
}

// winSQL makes the attempt $2 win the job $1, in one transaction, as a win
// does: the attempt won, the job succeeded with its result.
var winSQL = []string{
	`UPDATE attempts SET state = 'won', finished_at = now() WHERE id = $2 AND job_id = $1`,
	`UPDATE jobs SET state = 'succeeded', completed_by = $2, result = '{"ok":true}', version = version + 1,
		finished_at = now(), updated_at = now() WHERE id = $1`,
}

// commitWin commits winSQL in tx.
func commitWin(t *testing.T, tx pgx.Tx, jobID, attemptID string) {
	t.Helper()
	for _, q := range winSQL {
		if _, err := tx.Exec(context.Background(), q, jobID, attemptID); err != nil {
			t.Error(err)
			return
		}
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Error(err)
	}
}

// consistent says what is wrong with j, read while its attempt won, when its
// state and its attempt's do not belong to one moment ("" when they do).
func consistent(j *store.Job) string {
	if j == nil || len(j.Attempts) != 1 {
		return fmt.Sprintf("read %+v, want the job with its one attempt", j)
	}
	a := j.Attempts[0].State
	if (j.State == store.JobRunning && a == "running") || (j.State == store.JobSucceeded && a == "won") {
		return ""
	}
	return fmt.Sprintf("job read as %s (result %s) with its attempt %s: the job and its attempt were read at different moments",
		j.State, j.Result, a)
}

// GetJob (GET /v1/jobs/{id}), GetJobAny (the router's workers, operator
// commands) and GetJobToRun (the runner adopting or resuming a job) read the
// job, its attempts and its race events in one batch: three statements, which
// under READ COMMITTED each saw the database as of their own start, so that a
// win committed between the first and the second made the job read as
// running, without a result, beside its won attempt. Now the batch is one
// read-only REPEATABLE READ transaction: one snapshot. The read is held
// between its statements deterministically: a writer holds the attempts table
// (LOCK TABLE), so the read of the attempts waits after the job's row was
// read; the writer commits the win while it waits. With every pgx query exec
// mode a pool may be set to (default_query_exec_mode in the database URL);
// describe_exec describes every statement of the batch before it runs any, so
// its read waits for the lock before the job's row is read, and it read one
// moment even before. Found by review.
func TestGetJobReadsOneSnapshot(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	readers := []struct {
		name string
		read func(st *store.Store, id string) (*store.Job, error)
	}{
		{"GetJob", func(st *store.Store, id string) (*store.Job, error) { return st.GetJob(ctx, "acme", id) }},
		{"GetJobAny", func(st *store.Store, id string) (*store.Job, error) { return st.GetJobAny(ctx, id) }},
		{"GetJobToRun", func(st *store.Store, id string) (*store.Job, error) { return st.GetJobToRun(ctx, id) }},
	}
	for _, mode := range execModes {
		for _, r := range readers {
			t.Run(mode+"/"+r.name, func(t *testing.T) {
				// One connection, whose statements the first read prepares:
				// the next read sends its statements without waiting for them.
				pool, st := modeStore(t, b, mode, 1)
				jobID, attemptID := runningJobWithAttempt(t, b.db.Pool, "acme")
				if j, err := r.read(st, jobID); err != nil || consistent(j) != "" {
					t.Fatalf("%s: %v %s", r.name, err, consistent(j))
				}
				if _, err := r.read(st, "00000000-0000-4000-8000-000000000000"); err != store.ErrNotFound {
					t.Fatalf("%s of no job: %v, want ErrNotFound", r.name, err)
				}
				tx, err := b.db.Pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback(ctx) }()
				if _, err := tx.Exec(ctx, `LOCK TABLE attempts IN ACCESS EXCLUSIVE MODE`); err != nil {
					t.Fatal(err)
				}
				type read struct {
					j   *store.Job
					err error
				}
				got := make(chan read, 1)
				go func() {
					j, err := r.read(st, jobID)
					got <- read{j, err}
				}()
				waitForLockWait(t, b.db.Pool, "attempts")
				commitWin(t, tx, jobID, attemptID)
				res := <-got
				if res.err != nil {
					t.Fatal(res.err)
				}
				if msg := consistent(res.j); msg != "" {
					t.Fatal(msg)
				}
				// The read committed: its connection went back to the pool, and
				// is the one the next read uses.
				if n := pool.Stat().NewConnsCount(); n != 1 {
					t.Fatalf("the pool of one connection opened %d: a read left its connection in a transaction", n)
				}
			})
		}
	}
}

// execModes are pgx's query exec modes (default_query_exec_mode).
var execModes = []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"}

// modeStore is a store on b's database whose pool, of at most conns
// connections, runs its statements in the query exec mode mode.
func modeStore(t *testing.T, b *bundle, mode string, conns int) (*pgxpool.Pool, *store.Store) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("%s&pool_max_conns=%d&default_query_exec_mode=%s", b.db.URL, conns, mode))
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, store.New(pool, store.Options{KeyRetention: time.Hour})
}

// waitForLockWait returns once a session waits for a lock on table.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_locks WHERE relation = $1::regclass AND NOT granted)`, table).Scan(&waiting)
		if err != nil {
			t.Fatalf("no read waited for the lock on %s: %v", table, err)
		}
		if waiting {
			return
		}
		time.Sleep(time.Millisecond) // polling pg_locks: the server signals no lock wait
	}
}

// A page of jobs (GET /v1/jobs, `router jobs list --json`, the dashboard's
// and operator's listings) reads its jobs in one statement and their
// attempts and race events in another: a win committed between the two made
// a job read as running beside its won attempt. Now both are one read-only
// REPEATABLE READ transaction; the win is committed between them by a hook.
// Found by review.
func TestJobPagesReadOneSnapshot(t *testing.T) {
	b := setup(t)
	for _, mode := range execModes {
		t.Run(mode, func(t *testing.T) {
			_, st := modeStore(t, b, mode, 4)
			for _, tc := range []struct {
				name string
				read func(ctx context.Context) ([]*store.Job, error)
			}{
				{"ListJobs", func(ctx context.Context) ([]*store.Job, error) {
					jobs, _, err := st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 1, MaxBytes: 1 << 20})
					return jobs, err
				}},
				{"ListJobs by state", func(ctx context.Context) ([]*store.Job, error) {
					jobs, _, err := st.ListJobs(ctx, store.ListFilter{Owner: "acme", State: store.JobRunning, Limit: 1})
					return jobs, err
				}},
				{"ListJobs by operation", func(ctx context.Context) ([]*store.Job, error) {
					jobs, _, err := st.ListJobs(ctx, store.ListFilter{Owner: "acme", Operation: "triage", Limit: 1})
					return jobs, err
				}},
				{"LiveJobsPage", func(ctx context.Context) ([]*store.Job, error) {
					jobs, _, err := st.LiveJobsPage(ctx, []string{store.JobRunning}, "acme", nil, 1, 1<<20)
					return jobs, err
				}},
				{"LiveJobs", func(ctx context.Context) ([]*store.Job, error) {
					return st.LiveJobs(ctx, []string{store.JobRunning}, "acme", 1)
				}},
				{"RecentJobs", func(ctx context.Context) ([]*store.Job, error) { return st.RecentJobs(ctx, 1) }},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ctx := context.Background()
					jobID, attemptID := runningJobWithAttempt(t, b.db.Pool, "acme")
					won := false
					jobs, err := tc.read(store.WithBetweenSnapshotReads(ctx, func() {
						tx, err := b.db.Pool.Begin(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						commitWin(t, tx, jobID, attemptID)
						won = true
					}))
					if err != nil {
						t.Fatal(err)
					}
					if !won || len(jobs) != 1 || jobs[0].ID != jobID {
						t.Fatalf("won between the reads: %v; read %d jobs, want job %s", won, len(jobs), jobID)
					}
					if msg := consistent(jobs[0]); msg != "" {
						t.Fatal(msg)
					}
				})
			}
		})
	}
}
