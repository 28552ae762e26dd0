package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// sqlCapture records the SQL and arguments of the first statement whose text
// holds marker.
type sqlCapture struct {
	marker string
	mu     sync.Mutex
	sql    string
	args   []any
}

func (c *sqlCapture) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, c.marker) {
		c.mu.Lock()
		if c.sql == "" {
			c.sql, c.args = d.SQL, append([]any(nil), d.Args...)
		}
		c.mu.Unlock()
	}
	return ctx
}
func (c *sqlCapture) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// rowsExamined sums, over every plan node that reads one of tables, the rows
// it returned and the rows its filter removed, times its loops.
func rowsExamined(node map[string]any, tables map[string]bool) float64 {
	var n float64
	if rel, _ := node["Relation Name"].(string); tables[rel] {
		loops, _ := node["Actual Loops"].(float64)
		rows, _ := node["Actual Rows"].(float64)
		removed, _ := node["Rows Removed by Filter"].(float64)
		n += (rows + removed) * loops
	}
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				n += rowsExamined(m, tables)
			}
		}
	}
	return n
}

// SPEC §17 (hostile input) and the store's own rule for tenant-triggered
// reads (store.DefaultListScan: "any tenant could make the shared database
// do so with one request"): a 409 idempotency-key-reused, which any caller
// gets at will by resending a key with another body, runs
// store.ReleasedKeyJobOf (internal/store/key_history.go) to name the caller's
// earlier job. Its statement filters jobs by (owner, operation,
// idempotency_key, fingerprint), which no index of jobs serves, joined to
// released_keys, which has no such columns: it reads all of the owner's jobs
// (jobs_owner_created_id) or every released key of every owner. Here, with
// 3,000 other released jobs of the owner, one 409 examines thousands of rows
// to find nothing; an owner with 450,000 jobs makes each 409 a read of its
// whole history.
func TestKeyReusedLookupIsBounded(t *testing.T) {
	tr := &sqlCapture{marker: "released_keys r JOIN jobs j"}
	b := setup(t, options{tracer: tr})
	src := b.create(t, acmeKey, "bulk-src", triageBody("src"), "Prefer", "wait=10")
	if src.status != http.StatusCreated {
		t.Fatalf("setup: %d %s", src.status, src.raw)
	}
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, params, state, routing)
		 SELECT gen_random_uuid(), owner, operation, 'bulk-' || g, fingerprint, prompt_version, route, input, params, 'failed', routing
		 FROM jobs, generate_series(1, 3000) g WHERE id = '` + src.job() + `'`,
		// Each bulk job held its key until it expired and another job took
		// it over: the takeover's trigger writes released_keys, as in
		// production.
		`INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint, expires_at)
		 SELECT owner, operation, idempotency_key, id, fingerprint, now() - interval '1 hour'
		 FROM jobs WHERE idempotency_key LIKE 'bulk-%' AND idempotency_key <> 'bulk-src'`,
		`UPDATE idempotency_keys SET job_id = '` + src.job() + `' WHERE idempotency_key LIKE 'bulk-%' AND idempotency_key <> 'bulk-src'`,
		`ANALYZE jobs`, `ANALYZE released_keys`,
	} {
		if _, err := b.db.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.create(t, acmeKey, "k409", triageBody("X"), "Prefer", "wait=10"); r.status != http.StatusCreated {
		t.Fatalf("setup: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "k409", triageBody("Y")); r.status != http.StatusConflict {
		t.Fatalf("another request under the key: %d %s, want 409", r.status, r.raw)
	}
	tr.mu.Lock()
	sql, args := tr.sql, tr.args
	tr.mu.Unlock()
	if sql == "" {
		t.Fatal("the 409 did not look up the caller's earlier job (no statement on released_keys)")
	}
	var plan []map[string]any
	var raw []byte
	if err := b.db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &plan); err != nil || len(plan) == 0 {
		t.Fatalf("plan: %v %s", err, raw)
	}
	root, _ := plan[0]["Plan"].(map[string]any)
	if n := rowsExamined(root, map[string]bool{"jobs": true, "released_keys": true}); n > 100 {
		t.Errorf("one 409 idempotency-key-reused examined %.0f rows of jobs and released_keys to name no earlier job; "+
			"want a bounded lookup by (owner, operation, key)", n)
	}
}
