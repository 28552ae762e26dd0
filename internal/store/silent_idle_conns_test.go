package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// batchCounter is an Observer that counts the batched statements of each kind.
type batchCounter struct {
	mu      sync.Mutex
	batches map[string]int
}

func (o *batchCounter) DurableCommit() {}
func (o *batchCounter) Batch(kind string, _ int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.batches == nil {
		o.batches = map[string]int{}
	}
	o.batches[kind]++
}

func (o *batchCounter) count(kind string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.batches[kind]
}

// pingEveryAcquire makes pgxpool ping each connection it hands out, as it
// does one idle for more than a second: the test need not wait a second for
// its connections to count as idle.
func pingEveryAcquire(cfg *pgxpool.Config) {
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
}

// openIdle opens n connections of pool at once and returns them to it idle.
func openIdle(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	conns := make([]*pgxpool.Conn, n)
	for i := range conns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Release()
	}
	if idle := pool.Stat().IdleConns(); idle != int32(n) {
		t.Fatalf("idle connections %d, want %d", idle, n)
	}
}

// Idle connections of the pool that died silently (no FIN, no RST: a NAT
// that dropped the flows, a partition) do not fail the claim that draws
// them: pgxpool's ping of an idle connection gives up within its bound
// (store.ConfigurePool sets PingTimeout), the connection is destroyed and the
// next one, then a new one, is tried, all within the batch's wait for its
// connection. The claim's first batch commits. Before, the ping waited as
// long as the batch (30 s), the batch failed, and CreateJob's next try drew
// the next dead connection: 30 s per dead connection, and a claim whose every
// try met one reported its outcome unknown.
func TestClaimOnSilentIdleConnectionsCommitsInItsFirstBatch(t *testing.T) {
	b := setup(t)
	proxy := testdb.StartProxy(t, b.db.URL)
	pool := proxy.Pool(t, b.db.URL, pingEveryAcquire)
	obs := &batchCounter{}
	st := store.New(pool, store.Options{KeyRetention: time.Hour, Observer: obs})
	openIdle(t, pool, 2)
	proxy.Freeze()

	job, created, err := st.CreateJob(context.Background(), newJob(t, "acme", "triage", "after-freeze", `{"n":1}`))
	if err != nil || !created {
		t.Fatalf("claim after the idle connections died: created=%v err=%v", created, err)
	}
	if n := obs.count("claim"); n != 1 {
		t.Fatalf("claim batches %d, want 1: a batch failed on a dead idle connection and the claim was run again", n)
	}
	if n := st.LostClaims(); n != 0 {
		t.Fatalf("lost claims %d, want 0", n)
	}
	if proxy.AcceptedAfterFreeze() == 0 {
		t.Fatal("no connection was opened after the freeze: the claim did not meet a dead connection")
	}
	if _, err := b.st.GetJobAny(context.Background(), job.ID); err != nil {
		t.Fatalf("the claimed job: %v", err)
	}
}

// onePoolStore is a store on b's database whose pool has one connection,
// with short waits for a batch's connection and for the calls made after a
// batch (what a test waits out when no connection comes).
func onePoolStore(t *testing.T, b *bundle, opt store.Options) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	cfg.MaxConns, cfg.MinConns = 1, 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opt.KeyRetention = time.Hour
	st := store.New(pool, opt)
	st.SetBatchAcquireWait(50 * time.Millisecond)
	st.SetSettleWait(50 * time.Millisecond)
	return st, pool
}

// holdConn takes a connection of pool until t ends.
func holdConn(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	c, err := pool.Acquire(context.Background())
	if err != nil {
		t.Error(err)
		return
	}
	t.Cleanup(c.Release) // before the pool closes
}

// exhaustedStore is onePoolStore whose one connection the test holds: every
// call waits for a connection in vain.
func exhaustedStore(t *testing.T, b *bundle) *store.Store {
	t.Helper()
	st, pool := onePoolStore(t, b, store.Options{})
	holdConn(t, pool)
	return st
}

// A claim whose batches got no connection was never sent: CreateJob reports
// the database unavailable, not an outcome it cannot know, and hands nothing
// over (handOverLostClaim) for a claim that certainly wrote nothing. Before,
// the pool's wait ended in the batch's deadline, read as a statement that may
// have committed.
func TestClaimThatGotNoConnectionIsNotLost(t *testing.T) {
	b := setup(t)
	st := exhaustedStore(t, b)
	_, _, err := st.CreateJob(context.Background(), newJob(t, "acme", "triage", "no-conn", `{"n":1}`))
	if err == nil {
		t.Fatal("a claim that got no connection succeeded")
	}
	if !store.Unavailable(err) || strings.Contains(err.Error(), "outcome") {
		t.Fatalf("err = %v, want the database unavailable (not an unknown outcome)", err)
	}
	if n := st.LostClaims(); n != 0 {
		t.Fatalf("lost claims %d, want 0: a claim never sent was handed over as lost", n)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("jobs %d, want 0", n)
	}
}
