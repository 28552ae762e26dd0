package metrics_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

type dbCounts struct{ roundTrips, statements, transactions float64 }

func readDB(t *testing.T, m *metrics.Metrics) dbCounts {
	t.Helper()
	fams := scrape(t, m.Handler())
	return dbCounts{
		roundTrips:   value(t, fams, "router_db_round_trips_total", nil),
		statements:   value(t, fams, "router_db_statements_total", nil),
		transactions: value(t, fams, "router_db_transactions_total", nil),
	}
}

// The tracer counts what a real connection does, by the definitions on
// metrics.DB: each step's delta is checked.
func TestDBTracerCountsRoundTripsStatementsTransactions(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, "CREATE TABLE tracer_t (id int)"); err != nil {
		t.Fatal(err)
	}
	d := metrics.NewDB()
	pool, err := store.Connect(ctx, db.URL, func(c *pgxpool.Config) {
		c.ConnConfig.Tracer = d.Tracer()
		c.MinConns = 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m := metrics.New(metrics.Options{DB: d, NoProcessCollectors: true})
	conn, err := pool.Acquire(ctx) // one connection, so pgx's statement cache is predictable
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	steps := []struct {
		name string
		run  func() error
		want dbCounts
	}{
		{"autocommit exec without arguments", func() error {
			_, err := conn.Exec(ctx, "INSERT INTO tracer_t VALUES (1)")
			return err
		}, dbCounts{1, 1, 1}},
		{"query with a statement new to the connection (prepare + execute)", func() error {
			var n int
			return conn.QueryRow(ctx, "SELECT count(*) FROM tracer_t WHERE id = $1", 1).Scan(&n)
		}, dbCounts{2, 1, 1}},
		{"the same query again (prepared)", func() error {
			var n int
			return conn.QueryRow(ctx, "SELECT count(*) FROM tracer_t WHERE id = $1", 1).Scan(&n)
		}, dbCounts{1, 1, 1}},
		{"explicit transaction of two statements", func() error {
			tx, err := conn.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			for range 2 {
				if _, err := tx.Exec(ctx, "INSERT INTO tracer_t VALUES (2)"); err != nil {
					return err
				}
			}
			return tx.Commit(ctx)
		}, dbCounts{4, 2, 1}},
		{"rolled back transaction", func() error {
			tx, err := conn.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO tracer_t VALUES (3)"); err != nil {
				return err
			}
			return tx.Rollback(ctx)
		}, dbCounts{3, 1, 1}},
		{"batch outside a transaction: one round trip, one implicit transaction", func() error {
			b := &pgx.Batch{}
			b.Queue("INSERT INTO tracer_t VALUES ($1)", 4)
			b.Queue("INSERT INTO tracer_t VALUES ($1)", 5)
			b.Queue("SELECT count(*) FROM tracer_t")
			return conn.SendBatch(ctx, b).Close()
		}, dbCounts{1, 3, 1}},
		{"batch inside a transaction", func() error {
			return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				b := &pgx.Batch{}
				b.Queue("INSERT INTO tracer_t VALUES ($1)", 6)
				b.Queue("INSERT INTO tracer_t VALUES ($1)", 7)
				return tx.SendBatch(ctx, b).Close()
			})
		}, dbCounts{3, 2, 1}},
		{"batch that is a transaction", func() error {
			b := &pgx.Batch{}
			b.Queue("BEGIN")
			b.Queue("INSERT INTO tracer_t VALUES ($1)", 8)
			b.Queue("COMMIT")
			return conn.SendBatch(ctx, b).Close()
		}, dbCounts{1, 1, 1}},
	}
	for _, s := range steps {
		before := readDB(t, m)
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		after := readDB(t, m)
		got := dbCounts{after.roundTrips - before.roundTrips, after.statements - before.statements, after.transactions - before.transactions}
		if got != s.want {
			t.Errorf("%s: round trips, statements, transactions = %v, want %v", s.name, got, s.want)
		}
	}

	before := readDB(t, m)
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"tracer_t"}, []string{"id"}, pgx.CopyFromRows([][]any{{9}, {10}, {11}}))
	if err != nil || n != 3 {
		t.Fatalf("copy: %d rows, %v", n, err)
	}
	after := readDB(t, m)
	if got := after.statements - before.statements; got != 1 {
		t.Errorf("CopyFrom: %v statements, want 1", got)
	}
	if got := after.roundTrips - before.roundTrips; got < 1 {
		t.Errorf("CopyFrom: %v round trips, want at least 1", got)
	}
}

// The store's Observer side: durable commits and batch sizes reach /metrics.
func TestDBObserverCountsDurableCommitsAndBatches(t *testing.T) {
	d := metrics.NewDB()
	var o store.Observer = d
	m := metrics.New(metrics.Options{DB: d, NoProcessCollectors: true})
	fams := scrape(t, m.Handler())
	if got := value(t, fams, "router_db_durable_commits_total", nil); got != 0 {
		t.Fatalf("durable commits before = %v, want 0", got)
	}
	o.DurableCommit()
	o.DurableCommit()
	o.Batch("claim", 5)
	o.Batch("claim", 1)
	o.Batch("win", 3)
	fams = scrape(t, m.Handler())
	if got := value(t, fams, "router_db_durable_commits_total", nil); got != 2 {
		t.Errorf("durable commits = %v, want 2", got)
	}
	if got := value(t, fams, "router_db_batch_size", map[string]string{"kind": "claim"}); got != 2 {
		t.Errorf("claim batches = %v, want 2", got)
	}
	for _, mm := range fams["router_db_batch_size"].GetMetric() {
		if mm.GetLabel()[0].GetValue() == "claim" && mm.GetHistogram().GetSampleSum() != 6 {
			t.Errorf("claim batch items = %v, want 6", mm.GetHistogram().GetSampleSum())
		}
	}
	if got := value(t, fams, "router_db_batch_size", map[string]string{"kind": "win"}); got != 1 {
		t.Errorf("win batches = %v, want 1", got)
	}
}

// The store's commit waits reach /metrics as a histogram per kind, in seconds.
func TestDBObserverTimesCommitWaits(t *testing.T) {
	d := metrics.NewDB()
	m := metrics.New(metrics.Options{DB: d, NoProcessCollectors: true})
	var o store.CommitWaitObserver = d
	o.CommitWait("claim", 3*time.Millisecond)
	o.CommitWait("claim", time.Millisecond)
	o.CommitWait("win", 250*time.Millisecond)
	fams := scrape(t, m.Handler())
	sums := map[string]float64{}
	for _, mm := range fams["router_db_commit_wait_seconds"].GetMetric() {
		sums[mm.GetLabel()[0].GetValue()] = mm.GetHistogram().GetSampleSum()
	}
	if got := value(t, fams, "router_db_commit_wait_seconds", map[string]string{"kind": "claim"}); got != 2 {
		t.Errorf("claim waits = %v, want 2", got)
	}
	if got := value(t, fams, "router_db_commit_wait_seconds", map[string]string{"kind": "win"}); got != 1 {
		t.Errorf("win waits = %v, want 1", got)
	}
	if math.Abs(sums["claim"]-0.004) > 1e-9 || math.Abs(sums["win"]-0.25) > 1e-9 {
		t.Errorf("wait sums = %v, want claim 0.004 s and win 0.25 s", sums)
	}
}
