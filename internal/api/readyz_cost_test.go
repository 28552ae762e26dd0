package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// statementCounter counts the statements sent through a pool (a ping is not
// one, nor the probe's question whether the database accepts writes, which
// is its ping).
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(d.SQL, "current_setting('transaction_read_only')") {
		c.n.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// readyzRig is an API with nothing else on its pool (no runner, no
// listener): every statement counted is readiness's.
type readyzRig struct {
	count *statementCounter
	st    *store.Store
}

func newReadyzRig(t *testing.T) *readyzRig {
	t.Helper()
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	rig := &readyzRig{count: &statementCounter{}}
	cfg.ConnConfig.Tracer = rig.count
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	rig.st = store.New(pool, store.Options{})
	return rig
}

// server is a new API (nothing remembered) on the rig's store.
func (rig *readyzRig) server(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(api.New(api.Config{}, api.Deps{Store: rig.st}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func probeReady(t *testing.T, url string) {
	t.Helper()
	r, err := send(url+"/readyz", http.MethodGet, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("readyz %d %s", r.status, r.raw)
	}
}

// /readyz is answered to anyone, before any API key and outside the
// per-owner limits: once the migrations have been found current (they are
// never undone), a probe costs only its ping, not the migrations check's
// statements. Found by review.
func TestReadyzChecksMigrationsOnceCurrent(t *testing.T) {
	rig := newReadyzRig(t)
	url := rig.server(t)
	probeReady(t, url)
	if rig.count.n.Load() == 0 {
		t.Fatal("the first probe sent no statement: the test cannot see the migrations check")
	}
	before := rig.count.n.Load()
	const probes = 100
	for range probes {
		probeReady(t, url)
	}
	if n := rig.count.n.Load() - before; n > 0 {
		t.Errorf("%d probes after the migrations were found current sent %d statements (%.1f each) besides their pings: "+
			"anyone reaching the tenant listener multiplies database work with no key and no rate limit", probes, n, float64(n)/probes)
	}
}

// Probes arriving together at a replica that has not yet found its
// migrations current do not each run the check: one does, the others take
// its answer.
func TestReadyzConcurrentProbesCheckMigrationsOnce(t *testing.T) {
	rig := newReadyzRig(t)
	probeReady(t, rig.server(t))
	one := rig.count.n.Load() // what one check costs

	url := rig.server(t)
	before := rig.count.n.Load()
	const probes = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan string, probes)
	for range probes {
		wg.Go(func() {
			<-start
			r, err := send(url+"/readyz", http.MethodGet, "", "")
			switch {
			case err != nil:
				errs <- err.Error()
			case r.status != http.StatusOK:
				errs <- string(r.raw)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("readyz: %s", e)
	}
	if n := rig.count.n.Load() - before; n > one {
		t.Errorf("%d concurrent probes sent %d statements; one migrations check is %d", probes, n, one)
	}
}
