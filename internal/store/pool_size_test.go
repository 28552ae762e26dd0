package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// pool_max_conns below the default warm minimum (4) keeps that many warm, not
// a minimum above the maximum.
func TestPoolMinimumNeverAboveTheMaximum(t *testing.T) {
	b := setup(t)
	sep := "?"
	if strings.Contains(b.db.URL, "?") {
		sep = "&"
	}
	pool, err := store.Connect(context.Background(), b.db.URL+sep+"pool_max_conns=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if c := pool.Config(); c.MaxConns != 2 || c.MinConns != 2 {
		t.Errorf("pool_max_conns=2: max %d, min %d; want 2 and 2", c.MaxConns, c.MinConns)
	}
}

// pool_min_conns above the default maximum (20), with no pool_max_conns,
// raises the maximum to it (pgxpool would keep dialling connections the pool
// may not hold); with a pool_max_conns below it, the URL is refused, naming
// both.
func TestPoolMinimumAboveTheMaximum(t *testing.T) {
	b := setup(t)
	sep := "?"
	if strings.Contains(b.db.URL, "?") {
		sep = "&"
	}
	pool, err := store.Connect(context.Background(), b.db.URL+sep+"pool_min_conns=25")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if c := pool.Config(); c.MaxConns != 25 || c.MinConns != 25 {
		t.Errorf("pool_min_conns=25: max %d, min %d; want 25 and 25", c.MaxConns, c.MinConns)
	}
	pool2, err := store.Connect(context.Background(), b.db.URL+sep+"pool_min_conns=5&pool_max_conns=3")
	if err == nil {
		pool2.Close()
		t.Fatal("pool_min_conns=5 with pool_max_conns=3 accepted; want a refusal")
	}
	for _, want := range []string{"pool_min_conns=5 is more than pool_max_conns=3", "lower pool_min_conns or raise pool_max_conns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
}
