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
