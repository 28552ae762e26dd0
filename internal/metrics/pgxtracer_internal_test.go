package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The tracer runs on every statement of the hot path: telling monitoring
// (Uncounted) from a job's work costs it one ctx.Value lookup and no
// allocation, counted or not, however deep the context.
func TestTracerAllocatesNothing(t *testing.T) {
	d := NewDB()
	tr := pgxTracer{d: d}
	deep, cancel := context.WithTimeout(Uncounted(context.Background()), time.Hour)
	defer cancel()
	batch := &pgx.Batch{}
	batch.Queue("INSERT INTO t VALUES (1)")
	for _, c := range []struct {
		name  string
		ctx   context.Context
		count float64
	}{
		{"counted", context.Background(), 1},
		{"uncounted", Uncounted(context.Background()), 0},
		{"uncounted under a timeout", deep, 0},
	} {
		before := testutil.ToFloat64(d.roundTrips)
		tr.TraceQueryStart(c.ctx, nil, pgx.TraceQueryStartData{SQL: "SELECT 1"})
		if got := testutil.ToFloat64(d.roundTrips) - before; got != c.count {
			t.Errorf("%s: a query counted %v round trips, want %v", c.name, got, c.count)
		}
		allocs := testing.AllocsPerRun(100, func() {
			tr.TraceQueryStart(c.ctx, nil, pgx.TraceQueryStartData{SQL: "SELECT 1"})
			tr.TraceBatchStart(c.ctx, nil, pgx.TraceBatchStartData{Batch: batch})
			tr.TracePrepareEnd(c.ctx, nil, pgx.TracePrepareEndData{})
		})
		if allocs != 0 {
			t.Errorf("%s: the tracer allocates %v times per statement, want none", c.name, allocs)
		}
	}
}
