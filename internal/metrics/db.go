package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/routerhq/router/internal/store"
)

// DB counts the router's database work: round trips, statements and
// transactions as the pgx tracer (Tracer) sees them on the pool's connections,
// and durable commits and batch sizes as the store reports them (it is the
// store's Observer). It exists before the pool does — the tracer goes into the
// pool's configuration — and is registered with Options.DB.
//
// Definitions (docs/operations.md):
//   - a round trip is one Query, QueryRow or Exec (BEGIN, COMMIT and ROLLBACK
//     included), one whole SendBatch, one CopyFrom, or the preparation of a
//     statement new to its connection;
//   - a statement is one SQL statement other than transaction control (BEGIN,
//     COMMIT, ROLLBACK, SAVEPOINT, RELEASE); each statement of a batch counts;
//   - a transaction is one BEGIN, one statement sent outside a transaction
//     (autocommit), or one batch sent outside a transaction (a batch runs as one
//     implicit transaction);
//   - a durable commit is one commit that waited for the WAL flush (reported by
//     the store once it succeeded, with the sizes of the batch it committed:
//     a batch that failed is neither);
//   - a commit wait is the time one claim or win of the success path waited
//     for its durable commit: queued behind the batch in flight, then its own
//     batch's round trip and WAL flush (reported by the store).
//
// Not counted: pgxpool's health-check pings, the notification listener's
// waits, and the router's monitoring of itself, whose contexts are marked
// Uncounted (the collectors' reads at scrape time, the operator endpoints'
// reads, the breaker publisher's writes): the counters are the jobs' work,
// and stay still while no job runs, however often /metrics is scraped.
type DB struct {
	roundTrips   prometheus.Counter
	statements   prometheus.Counter
	transactions prometheus.Counter
	durable      prometheus.Counter
	batch        *prometheus.HistogramVec
	commitWait   *prometheus.HistogramVec
}

var (
	_ store.Observer           = (*DB)(nil)
	_ store.CommitWaitObserver = (*DB)(nil)
)

// BatchSizeBuckets are the buckets of router_db_batch_size.
var BatchSizeBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// CommitWaitBuckets are the buckets (seconds) of router_db_commit_wait_seconds:
// from a lone caller's commit on a fast disk to batches queued under load.
var CommitWaitBuckets = []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 5}

// NewDB makes the database counters (not yet registered: pass them in
// Options.DB).
func NewDB() *DB {
	return &DB{
		roundTrips: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_db_round_trips_total",
			Help: "Database round trips: each query or exec (BEGIN/COMMIT included), each whole batch, each COPY, each statement preparation."}),
		statements: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_db_statements_total",
			Help: "SQL statements sent to the database, transaction control excluded; every statement of a batch counts."}),
		transactions: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_db_transactions_total",
			Help: "Database transactions: explicit BEGINs, plus statements and batches sent outside a transaction (autocommit)."}),
		durable: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_db_durable_commits_total",
			Help: "Commits that waited for the WAL flush (synchronous_commit on), counted once they succeeded: a batch that failed committed nothing and is not counted."}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "router_db_batch_size",
			Help:    "Items carried by one batched statement, by kind (claim, win, renew, delivery: webhook deliveries' body freezes and recorded tries, delivery_read: their reads of events); a batch of writes (claim, win, renew, delivery) counts only if it committed.",
			Buckets: BatchSizeBuckets}, []string{"kind"}),
		commitWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "router_db_commit_wait_seconds",
			Help:    "Time a job's claim or win waited for its durable commit, by kind (claim, win): queued behind the batch in flight, then its own batch's round trip and WAL flush.",
			Buckets: CommitWaitBuckets}, []string{"kind"}),
	}
}

func (d *DB) collectors() []prometheus.Collector {
	return []prometheus.Collector{d.roundTrips, d.statements, d.transactions, d.durable, d.batch, d.commitWait}
}

// DurableCommit implements store.Observer.
func (d *DB) DurableCommit() { d.durable.Inc() }

// Batch implements store.Observer.
func (d *DB) Batch(kind string, size int) { d.batch.WithLabelValues(kind).Observe(float64(size)) }

// CommitWait implements store.CommitWaitObserver.
func (d *DB) CommitWait(kind string, wait time.Duration) {
	d.commitWait.WithLabelValues(kind).Observe(wait.Seconds())
}
