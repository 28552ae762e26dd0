package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// counter is a pgx tracer counting statements (by their first words) and
// transactions: an explicit BEGIN…COMMIT is one, a statement outside one is one
// (autocommit). A transaction that ran INSERT, UPDATE, DELETE, SELECT … FOR
// UPDATE or a notification is a write: its commit waits for a WAL flush.
type counter struct {
	mu         sync.Mutex
	labels     map[string]sqlInfo // raw SQL -> label and kind (the SQL texts are constants)
	statements map[string]int64
	txOpen     map[*pgx.Conn]bool // conn -> open transaction wrote
	inTx       map[*pgx.Conn]bool
	commits    int64
	writes     int64
	total      int64
	batches    int64
}

func newCounter() *counter {
	return &counter{labels: map[string]sqlInfo{}, statements: map[string]int64{}, txOpen: map[*pgx.Conn]bool{}, inTx: map[*pgx.Conn]bool{}}
}

var space = regexp.MustCompile(`\s+`)

func label(sql string) string {
	s := strings.TrimSpace(space.ReplaceAllString(sql, " "))
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return s
}

func writes(sql string) bool {
	u := strings.ToUpper(sql)
	for _, w := range []string{"INSERT ", "UPDATE ", "DELETE ", "FOR UPDATE", "NOTIFY", "PG_NOTIFY"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

type sqlInfo struct {
	label, low string
	write      bool
}

// info classifies a statement once; the tracer must not be what the profile shows.
func (c *counter) info(sql string) sqlInfo {
	if in, ok := c.labels[sql]; ok {
		return in
	}
	t := strings.TrimSpace(sql)
	in := sqlInfo{label: label(t), low: strings.ToLower(t), write: writes(t)}
	if len(c.labels) < 10000 {
		c.labels[sql] = in
	}
	return in
}

func (c *counter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.info(d.SQL)
	low := in.low
	switch {
	case strings.HasPrefix(low, "begin"):
		c.inTx[conn], c.txOpen[conn] = true, false
		return ctx
	case low == "commit" || low == "rollback":
		if low == "commit" {
			c.commits++
			if c.txOpen[conn] {
				c.writes++
			}
		}
		delete(c.inTx, conn)
		delete(c.txOpen, conn)
		return ctx
	}
	c.total++
	c.statements[in.label]++
	w := in.write
	if c.inTx[conn] {
		c.txOpen[conn] = c.txOpen[conn] || w
	} else {
		c.commits++
		if w {
			c.writes++
		}
	}
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	c.batches++
	c.commits++
	c.writes++
	c.mu.Unlock()
	return ctx
}

func (c *counter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	c.total++
	c.statements["(batch) "+c.info(d.SQL).label]++
	c.mu.Unlock()
}

func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Snapshot is what GET /debug/bench returns.
type Snapshot struct {
	Statements   int64            `json:"statements"`
	Commits      int64            `json:"commits"`
	WriteCommits int64            `json:"write_commits"`
	ByStatement  map[string]int64 `json:"by_statement"`
	Mallocs      uint64           `json:"mallocs"`
	AllocBytes   uint64           `json:"alloc_bytes"`
	GCs          uint32           `json:"gcs"`
	Goroutines   int              `json:"goroutines"`
}

func (c *counter) snapshot() Snapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.mu.Lock()
	defer c.mu.Unlock()
	by := make(map[string]int64, len(c.statements))
	for k, v := range c.statements {
		by[k] = v
	}
	return Snapshot{Statements: c.total, Commits: c.commits, WriteCommits: c.writes, ByStatement: by,
		Mallocs: ms.Mallocs, AllocBytes: ms.TotalAlloc, GCs: ms.NumGC, Goroutines: runtime.NumGoroutine()}
}

func serveDebug(addr string, c *counter, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/bench", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.snapshot())
	})
	if err := http.ListenAndServe(addr, mux); err != nil {
		log.Error("debug server", "err", err)
	}
}
