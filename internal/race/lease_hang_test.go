package race_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A lease renewal that hangs (a connection gone silent: no refusal, no
// answer) is given up after a tick, and the next tick renews on another
// connection. It used to wait on the runner's own context, for ever: no
// renewal followed, every lease of the replica lapsed, and recovery on another
// replica marked its healthy attempts unknown. Found by review.
func TestLeaseRenewalThatHangsIsGivenUp(t *testing.T) {
	db := testdb.New(t, store.Options{})
	hang := &hangFirstRenewal{renewed: make(chan struct{})}
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = hang
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	traced := &testdb.DB{Pool: pool, Store: store.New(pool, store.Options{}), URL: db.URL, Schema: db.Schema}
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{DB: traced, Lease: 300 * time.Millisecond, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		}},
	}})
	t.Cleanup(func() { close(release) }) // before the runner stops (cleanups run last first)
	rb.Submit(t)                         // its attempt hangs: the job stays running, its lease renewed every 100 ms
	select {
	case <-hang.renewed:
	case <-time.After(time.Minute): // only to fail rather than hang
		t.Fatal("no lease renewal succeeded after one hung: the renewals stopped")
	}
}

// hangFirstRenewal holds the first lease renewal until its context ends (as a
// connection that never answers would), and closes renewed when a later one
// succeeds.
type hangFirstRenewal struct {
	mu      sync.Mutex
	hung    bool
	once    sync.Once
	renewed chan struct{}
}

func isRenewal(b *pgx.Batch) bool {
	for _, q := range b.QueuedQueries {
		if strings.Contains(q.SQL, "UPDATE jobs SET lease_expires_at") && strings.Contains(q.SQL, "UPDATE attempts SET lease_expires_at") {
			return true
		}
	}
	return false
}

// Renewals go as a batch (BEGIN, the statement, COMMIT): pgx tells a
// BatchTracer of them.
func (h *hangFirstRenewal) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if data.Batch == nil || !isRenewal(data.Batch) {
		return ctx
	}
	h.mu.Lock()
	first := !h.hung
	h.hung = true
	h.mu.Unlock()
	if first {
		<-ctx.Done()
		return ctx
	}
	return context.WithValue(ctx, laterRenewal{}, true)
}

// laterRenewal marks, in a batch's context, a renewal after the hung one.
type laterRenewal struct{}

func (h *hangFirstRenewal) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (h *hangFirstRenewal) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	if later, _ := ctx.Value(laterRenewal{}).(bool); later && data.Err == nil {
		h.once.Do(func() { close(h.renewed) })
	}
}

func (h *hangFirstRenewal) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (h *hangFirstRenewal) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
