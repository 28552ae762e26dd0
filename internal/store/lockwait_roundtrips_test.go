package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// roundTrips records the round trips made through a pool, by the router's
// own definition (metrics.DB): each Query, QueryRow or Exec (BEGIN and
// COMMIT included) is one, with its SQL; each whole batch is one, its
// statements joined by "; "; each statement prepared anew on its connection
// is one ("PREPARE").
type roundTrips struct {
	mu  sync.Mutex
	sql []string
}

var (
	_ pgx.QueryTracer   = (*roundTrips)(nil)
	_ pgx.BatchTracer   = (*roundTrips)(nil)
	_ pgx.PrepareTracer = (*roundTrips)(nil)
)

func (r *roundTrips) add(sql string) {
	r.mu.Lock()
	r.sql = append(r.sql, strings.Join(strings.Fields(sql), " "))
	r.mu.Unlock()
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
	}
	r.add(strings.Join(sqls, "; "))
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return ctx
}
func (r *roundTrips) TracePrepareEnd(_ context.Context, _ *pgx.Conn, d pgx.TracePrepareEndData) {
	if !d.AlreadyPrepared {
		r.add("PREPARE")
	}
}

// measure returns the round trips call made.
func (r *roundTrips) measure(t *testing.T, call func() error) []string {
	t.Helper()
	r.mu.Lock()
	n := len(r.sql)
	r.mu.Unlock()
	if err := call(); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sql[n:]...)
}

// tracedStore is a store over b's schema whose pool has one connection (so
// that a first call prepares its statements and the next ones find them
// prepared) and records its round trips.
func tracedStore(t *testing.T, b *bundle) (*store.Store, *roundTrips) {
	t.Helper()
	rec := &roundTrips{}
	pool, err := store.Connect(context.Background(), b.db.URL, func(c *pgxpool.Config) {
		c.ConnConfig.Tracer = rec
		c.MinConns, c.MaxConns = 0, 1
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{KeyRetention: time.Hour}), rec
}

const lockWaitStmt = "set_config('lock_timeout'"

// wantLockWaitWithFirstLock fails unless the transaction opened by the last
// BEGIN of trips bounds its lock waits in the same round trip as its first
// statement, lock, which that round trip must contain, and unless no round
// trip of trips is the bound alone.
func wantLockWaitWithFirstLock(t *testing.T, what string, trips []string, lock string) {
	t.Helper()
	begin := -1
	for i, q := range trips {
		if strings.EqualFold(q, "begin") {
			begin = i
		}
		if strings.Contains(q, lockWaitStmt) && !strings.Contains(q, ";") {
			t.Fatalf("%s sent its lock wait's bound as a round trip of its own (round trip %d of %q)", what, i+1, trips)
		}
	}
	if begin < 0 || begin+1 >= len(trips) {
		t.Fatalf("%s: no transaction in its round trips %q", what, trips)
	}
	first := trips[begin+1]
	if !strings.Contains(first, lockWaitStmt) || !strings.Contains(first, lock) {
		t.Fatalf("%s: the transaction's first round trip is %q; want its lock wait's bound and %q in one batch (round trips %q)",
			what, first, lock, trips)
	}
}

// Issue 11: the bounded lock wait of an attempt's non-winning end (every
// loser of a hedged job, every failure) goes in the same round trip as its
// first statement, as CreateAttempt's does: BEGIN, the bound with the
// attempt's job, the job's lock, the update, COMMIT — five round trips, where
// a set_config of its own made six.
func TestFinishAttemptBoundsItsLockWaitWithoutARoundTripOfItsOwn(t *testing.T) {
	b := setup(t)
	st, rec := tracedStore(t, b)
	ctx := context.Background()
	failed := store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "server_error", "fault": "provider"}}
	_, warm := b.running(t, "roundtrips-warm")
	if err := st.FinishAttempt(ctx, warm.ID, failed); err != nil { // prepares the statements
		t.Fatal(err)
	}
	_, a := b.running(t, "roundtrips-finish")

	trips := rec.measure(t, func() error { return st.FinishAttempt(ctx, a.ID, failed) })
	wantLockWaitWithFirstLock(t, "FinishAttempt", trips, "SELECT job_id::text FROM attempts")
	if len(trips) != 5 {
		t.Fatalf("FinishAttempt made %d round trips, want 5: %q", len(trips), trips)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'failed'`, a.ID); n != 1 {
		t.Fatal("the attempt is not failed")
	}
}

// The same for a valid answer that came late (its job already won) and for
// a cancellation: the bound goes with the job's lock.
func TestLateAnswerAndCancelBoundTheirLockWaitWithTheJobsLock(t *testing.T) {
	ctx := context.Background()
	t.Run("late answer", func(t *testing.T) {
		b := setup(t)
		st, rec := tracedStore(t, b)
		j, first := b.running(t, "roundtrips-late")
		hedge := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
		if won, err := b.st.Complete(ctx, win(j, first)); err != nil || !won {
			t.Fatalf("first answer: won %v, err %v", won, err)
		}
		var o store.Offered
		trips := rec.measure(t, func() (err error) {
			o, err = st.OfferCompletion(ctx, win(j, hedge))
			return err
		})
		if o.Won || o.State != store.AttemptLost {
			t.Fatalf("the late answer: %+v; want recorded lost", o)
		}
		wantLockWaitWithFirstLock(t, "the late answer", trips, "FROM jobs WHERE id = $1 FOR UPDATE")
	})
	t.Run("cancel", func(t *testing.T) {
		b := setup(t)
		st, rec := tracedStore(t, b)
		j, _ := b.running(t, "roundtrips-cancel")
		trips := rec.measure(t, func() error { return st.CancelJob(ctx, "acme", j.ID) })
		wantLockWaitWithFirstLock(t, "CancelJob", trips, "FROM jobs WHERE id = $1 AND owner = $2 FOR UPDATE")
		if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'cancelled'`, j.ID); n != 1 {
			t.Fatal("the job is not cancelled")
		}
	})
}
