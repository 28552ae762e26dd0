package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// countedConn counts itself out of open when closed.
type countedConn struct {
	net.Conn
	once sync.Once
	open *atomic.Int64
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// /readyz is answered to anyone: a burst of probes while the pool is busy
// opens one database connection beyond the pool's at a time (docs/api.md),
// the probes sharing it, not one each. Before, 20 concurrent probes opened
// 20, and a burst could take the database's last connections from every
// replica. The probes' dials are held until every probe has reached the
// router, so that they overlap.
func TestReadyzBusyPoolOpensOneConnectionAtMost(t *testing.T) {
	const probes = 20
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns, cfg.MaxConns = 1, 1
	var open, peak atomic.Int64
	var probing atomic.Bool
	allIn := make(chan struct{}) // closed once every probe has reached the router
	d := &net.Dialer{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		n := open.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		conn := &countedConn{Conn: c, open: &open}
		if probing.Load() { // a probe's own connection: held open until all probes are in
			select {
			case <-allIn:
			case <-ctx.Done():
				conn.Close()
				return nil, ctx.Err()
			}
		}
		return conn, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h := api.New(api.Config{}, api.Deps{Store: store.New(pool, store.Options{})})
	var in atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if probing.Load() && in.Add(1) == probes {
			close(allIn)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	readyz := func() (int, string) {
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := readyz(); code != http.StatusOK { // also reads the migrations once
		t.Fatalf("idle pool: /readyz %d %s", code, body)
	}
	conn, err := pool.Acquire(context.Background()) // the work holds the pool's one connection
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	base := open.Load()
	peak.Store(base)
	probing.Store(true)
	var wg sync.WaitGroup
	codes := make([]int, probes)
	bodies := make([]string, probes)
	for i := range probes {
		wg.Go(func() { codes[i], bodies[i] = readyz() })
	}
	wg.Wait()
	if extra := peak.Load() - base; extra > 1 {
		t.Errorf("%d concurrent /readyz probes on a busy pool opened %d database connections at once beyond the pool's (docs: one)", probes, extra)
	}
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("probe %d: /readyz %d %s, want 200", i, code, bodies[i])
		}
	}
}
