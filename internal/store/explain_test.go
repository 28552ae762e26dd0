package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// explainingPool returns a pool whose statements report their plans with
// actual row counts (auto_explain, to the statement's connection), and a
// function that returns the plans reported since its last call of the
// statements whose text contains its argument.
func explainingPool(t *testing.T, b *bundle) (*pgxpool.Pool, func(textHas string) []explainedPlan) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	var mu sync.Mutex
	var notices []string
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Message)
		mu.Unlock()
	}
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if err := next(ctx, conn); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `LOAD 'auto_explain'`); err != nil {
			return err
		}
		_, err = conn.Exec(ctx, `SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
			SET auto_explain.log_timing = off; SET auto_explain.log_format = json; SET auto_explain.log_level = notice`)
		return err
	}
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		// auto_explain is one of the server's contrib modules: a server
		// installed without them lacks a capability of the machine (the
		// module's file is missing). Anything else fails — a refusal above
		// all: make test's server is a superuser, which may load the module
		// and set its parameters, so a refusal there is a real failure.
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedFile {
			t.Skipf("the server has no auto_explain (install PostgreSQL's contrib modules): %v", err)
		}
		t.Fatalf("auto_explain on the test's server: %v", err)
	}
	return pool, func(textHas string) []explainedPlan {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		var plans []explainedPlan
		for _, n := range notices {
			_, js, ok := strings.Cut(n, "plan:")
			if !ok {
				continue
			}
			p := explainedPlan{JSON: js}
			if err := json.Unmarshal([]byte(js), &p); err != nil {
				t.Fatalf("auto_explain's plan: %v\n%s", err, n)
			}
			if strings.Contains(p.Query, textHas) {
				plans = append(plans, p)
			}
		}
		notices = nil
		return plans
	}
}

// explainedPlan is a statement's plan as auto_explain reports it.
type explainedPlan struct {
	Query string `json:"Query Text"`
	Plan  analyzedNode
	JSON  string `json:"-"` // the whole report
}

// scans reports whether the plan has a node that reads table (executed or
// not).
func (n analyzedNode) scans(table string) bool {
	if n.Relation == table {
		return true
	}
	for _, c := range n.Plans {
		if c.scans(table) {
			return true
		}
	}
	return false
}

// analyzedNode is a node of an EXPLAIN ANALYZE plan in JSON.
type analyzedNode struct {
	Relation       string         `json:"Relation Name"`
	ActualRows     float64        `json:"Actual Rows"`
	ActualLoops    float64        `json:"Actual Loops"`
	RemovedFilter  float64        `json:"Rows Removed by Filter"`
	RemovedRecheck float64        `json:"Rows Removed by Index Recheck"`
	Plans          []analyzedNode `json:"Plans"`
}

// rowsRead is how many rows of table the plan's scans read: those they
// returned and those their filters removed, over every loop.
func (n analyzedNode) rowsRead(table string) float64 {
	var read float64
	if n.Relation == table {
		read = (n.ActualRows + n.RemovedFilter + n.RemovedRecheck) * max(n.ActualLoops, 1)
	}
	for _, c := range n.Plans {
		read += c.rowsRead(table)
	}
	return read
}
