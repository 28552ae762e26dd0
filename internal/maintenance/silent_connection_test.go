package maintenance_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A database call sent on a connection gone silent (a failover whose old
// primary vanished, a partition) meets no refusal and no answer: it ends only
// when its context does. These tests send the maintenance loops' calls, made
// by the real store, on such a connection — one to the test's database
// through a proxy that stopped forwarding without closing anything — and
// check that the loops, whose contexts last the replica's whole life, do not
// wait with them.

// never bounds the wait for something that, with the fix, happens within a
// second or two: past it the test fails instead of hanging.
const never = 20 * time.Second

// silentRig is a store whose connections to the test's database go through
// a freezable proxy (the DB's own pool and store, for setting up and
// checking, talk to the database directly).
type silentRig struct {
	db    *testdb.DB
	proxy *testdb.FreezableProxy
	pool  *pgxpool.Pool // st's, through the proxy
	st    *store.Store
}

func newSilentRig(t *testing.T, opt store.Options) silentRig {
	t.Helper()
	db := testdb.New(t, opt)
	proxy := testdb.StartProxy(t, db.URL)
	pool := proxy.Pool(t, db.URL)
	r := silentRig{db: db, proxy: proxy, pool: pool, st: store.New(pool, opt)}
	r.connect(t)
	return r
}

// connect leaves a connection that answers, idle, in the store's pool, so
// that the next call does not spend its bound connecting. The pool hands out
// no connection that failed (a silent one included): it closes them.
func (r silentRig) connect(t *testing.T) {
	t.Helper()
	if err := r.pool.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// goSilent makes the store's next call go out on a silent connection: it
// leaves one connection, idle, in the store's pool, and freezes it.
func (r silentRig) goSilent(t *testing.T) {
	t.Helper()
	r.connect(t)
	if st := r.pool.Stat(); st.TotalConns() != 1 || st.IdleConns() != 1 {
		t.Fatalf("the store's pool holds %d connections (%d idle), want 1 idle", st.TotalConns(), st.IdleConns())
	}
	r.proxy.Freeze()
}

// leases is how many rows the lease table holds, expired or not.
func (r silentRig) leases(t *testing.T) int {
	t.Helper()
	var n int
	if err := r.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM leader_leases`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// One renewal that never gets an answer does not stop the election: the
// elector gives it up after a renewal interval, tries again on another
// connection, and leads. Before, Run's renewal waited as long as the replica
// lived, so in a failover no replica led (no lease expiry, no
// reconciliation, no retention).
func TestElectorRecoversFromASilentRenewal(t *testing.T) {
	r := newSilentRig(t, store.Options{})
	ttl := 3 * time.Second // a try is given up after ttl/3
	e := maintenance.NewElector(r.st, "maintenance", "replica-a", ttl, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if !e.Once(context.Background()) {
		t.Fatal("the replica did not become leader")
	}
	// Closed when this replica next gains the lead: only after a try that
	// failed, as the first renewal, sent on the silent connection, must.
	regained := e.Gained()
	r.goSilent(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-regained:
	case <-time.After(never):
		t.Fatalf("after %s the elector has not led again: it still waits for a renewal that never answers", never)
	}
	if r.proxy.AcceptedAfterFreeze() == 0 {
		t.Fatal("the lead was regained with no connection opened since the freeze: was the renewal sent on the silent one?")
	}
	// The renewal succeeded just now, with nine tenths of the lease to run.
	if !e.IsLeader() {
		t.Fatal("a renewal succeeded after the silent one, yet this replica does not lead")
	}
}

// A step-down whose resignation never gets an answer returns anyway, leaving
// the lease to expire, even when its caller set no deadline.
func TestStepDownDoesNotWaitForASilentResignation(t *testing.T) {
	r := newSilentRig(t, store.Options{})
	e := maintenance.NewElector(r.st, "maintenance", "replica-a", 3*time.Second, nil)
	if !e.Once(context.Background()) {
		t.Fatal("the replica did not become leader")
	}
	r.goSilent(t)
	if err := stepDown(t, e); err == nil {
		t.Fatal("a resignation that got no answer reported success")
	}
	if e.IsLeader() {
		t.Fatal("a replica that stepped down still says it leads")
	}
	if n := r.leases(t); n != 1 {
		t.Fatalf("%d lease rows after a resignation that never reached the database, want the lease left to expire", n)
	}
}

// stepDown is e.StepDown with no deadline, which must return within never.
func stepDown(t *testing.T, e *maintenance.Elector) error {
	t.Helper()
	stepped := make(chan error, 1)
	go func() { stepped <- e.StepDown(context.Background()) }()
	select {
	case err := <-stepped:
		return err
	case <-time.After(never):
		t.Fatalf("after %s StepDown still waits for a resignation that never answers", never)
		return nil
	}
}

// logRecords is a slog handler that passes each record on (up to its
// buffer; later ones are dropped rather than holding the logger).
type logRecords chan slog.Record

func (h logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h logRecords) WithGroup(string) slog.Handler            { return h }
func (h logRecords) Handle(_ context.Context, rec slog.Record) error {
	select {
	case h <- rec.Clone():
	default:
	}
	return nil
}

// attrErr is rec's attribute "err", if it is an error.
func attrErr(rec slog.Record) error {
	var err error
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			err, _ = a.Value.Any().(error)
			return false
		}
		return true
	})
	return err
}

type alwaysLeader struct{}

func (alwaysLeader) IsLeader() bool { return true }

// One batch that never gets an answer does not stop retention on the leader:
// the pass gives it up after BatchTimeout, says so, and the next pass runs.
func TestCleanerRecoversFromASilentBatch(t *testing.T) {
	const batchTimeout = time.Second
	t.Run("Once", func(t *testing.T) {
		r := newSilentRig(t, store.Options{})
		c := &maintenance.Cleaner{Store: r.st, BatchTimeout: batchTimeout}
		r.goSilent(t)
		done := make(chan error, 1)
		go func() { _, err := c.Once(context.Background()); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a pass whose batch got no answer returned %v, want a deadline error", err)
			}
		case <-time.After(never):
			t.Fatalf("after %s the pass still waits for a batch that never answers", never)
		}
		r.connect(t)
		if _, err := c.Once(context.Background()); err != nil {
			t.Fatalf("the next pass, on another connection: %v", err)
		}
	})
	// A pass first ends the removed webhooks past their window: with the
	// store as it is, that call is the one sent on the silent connection,
	// and it too is given up after BatchTimeout; with only the deletion
	// (onlyDeletes), the batch is.
	type onlyDeletes struct{ maintenance.RetentionStore }
	for _, tc := range []struct {
		name  string
		store func(*store.Store) maintenance.RetentionStore
		gave  string // the log message of the call given up
	}{
		{"Run", func(st *store.Store) maintenance.RetentionStore { return onlyDeletes{st} }, "retention: could not delete expired jobs"},
		{"Run, webhook expiry", func(st *store.Store) maintenance.RetentionStore { return st }, "retention: could not end removed webhooks past their redelivery window"},
	} {
		t.Run(tc.name, func(t *testing.T) { silentRun(t, batchTimeout, tc.store, tc.gave) })
	}
}

func silentRun(t *testing.T, batchTimeout time.Duration, wrap func(*store.Store) maintenance.RetentionStore, gave string) {
	opt := store.Options{KeyRetention: time.Hour}
	r := newSilentRig(t, opt)
	g := rig{db: r.db, st: r.db.Store}
	if err := g.st.SyncConfigWebhooks(context.Background(), map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
		t.Fatal(err)
	}
	j := g.succeeded(t, "old")
	g.age(t, j.ID, 800*time.Hour)
	r.goSilent(t)
	logs := make(logRecords, 64)
	c := &maintenance.Cleaner{Store: wrap(r.st), Leader: alwaysLeader{}, After: 720 * time.Hour,
		Interval: 50 * time.Millisecond, BatchTimeout: batchTimeout, Log: slog.New(logs)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	timeout := time.After(never)
	for silent, deleted := false, false; !deleted; {
		select {
		case rec := <-logs:
			switch rec.Message {
			case gave:
				if err := attrErr(rec); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a pass failed with %v, want the silent call's deadline error", err)
				}
				silent = true
			case "retention: deleted expired jobs":
				if !silent {
					t.Fatal("the expired job was deleted with no call given up first: was the connection frozen?")
				}
				deleted = true
			default:
				t.Fatalf("unexpected log record %q", rec.Message)
			}
		case <-timeout:
			t.Fatalf("after %s at an interval of 50ms the cleaner has deleted nothing: it still waits for a call that never answers", never)
		}
	}
	if n := g.count(t, `SELECT count(*) FROM jobs WHERE id = $1`, j.ID); n != 0 {
		t.Fatal("the cleaner said it deleted the expired job, which is still there")
	}
}
