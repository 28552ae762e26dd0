package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// Issue 11: the batched claim and win reach their rows by index whatever the
// statistics say. Here the tables were analyzed empty and then grew by
// thousands of rows (as in the first minutes of a busy new database), and the
// in-flight attempts index holds thousands of entries of attempts that
// finished since: a plan left to those statistics scans whole tables (the
// router then slows down as its tables grow; measured by `make bench`). Then
// again with the statistics brought up to date, which say the in-flight index
// is nearly empty (the win's check of its attempt once read it whole). The
// plans checked are the generic ones the store runs.
func TestBatchedStatementsUseIndexesWhateverTheStatistics(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := b.db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, tbl := range []string{"jobs", "attempts", "idempotency_keys", "race_events"} {
		exec(`ALTER TABLE ` + tbl + ` SET (autovacuum_enabled = false)`)
		exec(`ANALYZE ` + tbl)
	}
	exec(`INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		SELECT gen_random_uuid(), 'bulk', 'triage', 'k' || g, '\x00', '1', 'default', '{}', 'running'
		FROM generate_series(1, 5000) g`)
	exec(`INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint)
		SELECT owner, operation, idempotency_key, id, fingerprint FROM jobs WHERE owner = 'bulk'`)
	exec(`INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version)
		SELECT gen_random_uuid(), id, 1, 'p', 'primary', 'running', 1 FROM jobs WHERE owner = 'bulk'`)
	exec(`UPDATE attempts SET state = 'failed', finished_at = now() WHERE state = 'running'`)

	var mu sync.Mutex
	var plans [][]byte
	b.st.SetOnPlan(func(p []byte) {
		mu.Lock()
		plans = append(plans, p)
		mu.Unlock()
	})
	claimAndWin(t, b.st, "plan-1")
	// The same with statistics that are right: nearly every attempt finished,
	// so the in-flight index looks nearly empty, while it still holds an
	// entry for each (measured under load: the win's check of its attempt
	// then read that whole index).
	for _, tbl := range []string{"jobs", "attempts", "idempotency_keys", "race_events"} {
		exec(`ANALYZE ` + tbl)
	}
	claimAndWin(t, b.st, "plan-2")
	mu.Lock()
	defer mu.Unlock()
	if len(plans) != 4 {
		t.Fatalf("saw %d plans, want the claim's and the win's, twice", len(plans))
	}
	for i, p := range plans {
		var doc []struct{ Plan planNode }
		if err := json.Unmarshal(p, &doc); err != nil || len(doc) != 1 {
			t.Fatalf("plan %d: %v: %s", i, err, p)
		}
		for _, bad := range doc[0].Plan.scans() {
			t.Errorf("%s statement, statistics %s: %s: a scan whose cost grows with the table",
				[]string{"claim", "win"}[i%2], []string{"stale", "up to date"}[i/2], bad)
		}
	}
}

type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Cond     string     `json:"Index Cond"`
	Plans    []planNode `json:"Plans"`
}

// scans lists the whole-table and bitmap scans of the router's tables, and
// index scans that read a whole index (no index condition: a partial index of
// in-flight rows holds, until VACUUM, an entry for every row that left it).
func (n planNode) scans() []string {
	var out []string
	switch n.NodeType {
	case "Seq Scan", "Bitmap Heap Scan", "Bitmap Index Scan":
		if n.Relation != "" || strings.HasPrefix(n.Index, "attempts") || strings.HasPrefix(n.Index, "jobs") {
			out = append(out, n.NodeType+" on "+n.Relation+n.Index)
		}
	case "Index Scan", "Index Only Scan":
		// attempts_unknown is exempt: it holds the few attempts whose outcome
		// is unknown and those settled since the last VACUUM, not every
		// attempt that ran.
		if n.Cond == "" && n.Index != "attempts_unknown" {
			out = append(out, n.NodeType+" without a condition on "+n.Index)
		}
	}
	for _, c := range n.Plans {
		out = append(out, c.scans()...)
	}
	return out
}

// Issue 11: the batched claim and win are planned once per connection, not
// at every batch. Left to choose, PostgreSQL planned a lone caller's claim
// afresh each time (planning cost more than executing); the generic plan is
// the same index-only plan. One connection, so that pg_prepared_statements
// (per session) shows the statements the store prepared on it.
func TestBatchedStatementsArePlannedOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	cfg := b.db.Pool.Config()
	cfg.MinConns, cfg.MaxConns = 0, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})
	const jobs = 8 // more than the five custom plans PostgreSQL tries before it compares
	for i := range jobs {
		claimAndWin(t, st, "once-"+itoa(i))
	}
	rows, err := pool.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement ~ '^\s*WITH (input|w) AS \(\s*SELECT \* FROM unnest' ORDER BY statement`)
	if err != nil {
		t.Fatal(err)
	}
	type prepared struct {
		SQL             string
		Generic, Custom int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[prepared])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("found %d batched statements prepared on the connection, want the claim and the win", len(got))
	}
	for _, p := range got {
		if p.Custom != 0 || p.Generic != jobs {
			t.Errorf("%.40q…: %d custom and %d generic plans, want 0 and %d (one plan, reused)",
				strings.Join(strings.Fields(p.SQL), " "), p.Custom, p.Generic, jobs)
		}
	}
}

// claimAndWin runs one job through the batched claim (with its first attempt)
// and the batched win.
func claimAndWin(t *testing.T, st *store.Store, key string) {
	t.Helper()
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", key, `{}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	a := j.Attempts[0]
	if won, err := st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
		Result: json.RawMessage(`{}`)}); err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
}
