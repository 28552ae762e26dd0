package metrics

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// pgxTracer feeds DB's round-trip, statement and transaction counters from
// pgx's tracing hooks. Install it as the pool's ConnConfig.Tracer (DB.Tracer).
// It counts at the start of each call (a round trip is made whether or not the
// statement fails) and keeps no per-connection state: whether a statement runs
// inside a transaction is the connection's own transaction status. Work on a
// context marked Uncounted is not counted.
type pgxTracer struct{ d *DB }

var (
	_ pgx.QueryTracer    = pgxTracer{}
	_ pgx.BatchTracer    = pgxTracer{}
	_ pgx.CopyFromTracer = pgxTracer{}
	_ pgx.PrepareTracer  = pgxTracer{}
)

// Tracer is the pgx tracer that counts round trips, statements and
// transactions (see DB for the definitions).
func (d *DB) Tracer() pgx.QueryTracer { return pgxTracer{d: d} }

// uncountedKey marks a context whose database work the tracer leaves out. A
// zero-size key: looking it up allocates nothing.
type uncountedKey struct{}

// Uncounted marks ctx's database work as the router's monitoring of itself —
// the collectors' reads at scrape time, the operator endpoints' reads, the
// breaker publisher's writes — which the tracer does not count: the
// router_db_* counters are the jobs' database work, divided by
// router_jobs_settled_total for the work per job (docs/operations.md, SPEC
// §14), and must not grow with scrapes, open dashboards or the passing of
// time.
func Uncounted(ctx context.Context) context.Context {
	return context.WithValue(ctx, uncountedKey{}, true)
}

// counted reports whether ctx's database work counts: one ctx.Value lookup,
// without allocating (the tracer runs on every statement of the hot path).
func counted(ctx context.Context) bool { return ctx.Value(uncountedKey{}) == nil }

// idle reports whether conn is outside any transaction, so a statement sent
// now runs in a transaction of its own.
func idle(conn *pgx.Conn) bool {
	return conn != nil && conn.PgConn() != nil && conn.PgConn().TxStatus() == 'I'
}

func (t pgxTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !counted(ctx) {
		return ctx
	}
	t.d.roundTrips.Inc()
	switch classify(data.SQL) {
	case sqlBegin:
		t.d.transactions.Inc()
	case sqlStatement:
		t.d.statements.Inc()
		if idle(conn) {
			t.d.transactions.Inc()
		}
	}
	return ctx
}

func (pgxTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t pgxTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if !counted(ctx) {
		return ctx
	}
	t.d.roundTrips.Inc()
	if data.Batch == nil {
		return ctx
	}
	begins, statements := 0, 0
	for _, q := range data.Batch.QueuedQueries {
		switch classify(q.SQL) {
		case sqlBegin:
			begins++
		case sqlStatement:
			statements++
		}
	}
	t.d.statements.Add(float64(statements))
	t.d.transactions.Add(float64(begins))
	if begins == 0 && statements > 0 && idle(conn) {
		t.d.transactions.Inc() // the batch is one implicit transaction
	}
	return ctx
}

func (pgxTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (pgxTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (t pgxTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	if !counted(ctx) {
		return ctx
	}
	t.d.roundTrips.Inc()
	t.d.statements.Inc()
	if idle(conn) {
		t.d.transactions.Inc()
	}
	return ctx
}

func (pgxTracer) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

func (pgxTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return ctx
}

// TracePrepareEnd counts the round trip of preparing a statement the
// connection had not prepared yet (pgx's statement cache missed). pgx hands
// it the context TracePrepareStart returned: the caller's.
func (t pgxTracer) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareEndData) {
	if !data.AlreadyPrepared && counted(ctx) {
		t.d.roundTrips.Inc()
	}
}

type sqlKind int

const (
	sqlStatement sqlKind = iota
	sqlBegin             // BEGIN, START TRANSACTION
	sqlControl           // COMMIT, ROLLBACK, END, ABORT, SAVEPOINT, RELEASE
)

// classify looks at the first word of sql only, without allocating: the
// tracer runs on every statement of the hot path.
func classify(sql string) sqlKind {
	i := 0
	for i < len(sql) && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r' || sql[i] == '(') {
		i++
	}
	j := i
	for j < len(sql) && (sql[j]|0x20 >= 'a' && sql[j]|0x20 <= 'z') {
		j++
	}
	w := sql[i:j]
	switch {
	case equalFold(w, "begin"), equalFold(w, "start"):
		return sqlBegin
	case equalFold(w, "commit"), equalFold(w, "rollback"), equalFold(w, "end"), equalFold(w, "abort"),
		equalFold(w, "savepoint"), equalFold(w, "release"):
		return sqlControl
	}
	return sqlStatement
}

// equalFold compares an ASCII word with a lower-case keyword.
func equalFold(w, lower string) bool {
	if len(w) != len(lower) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
