package store_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// The record that an attempt was never sent (a drain, an attempt that could
// not be marked running) is what keeps it from becoming `unknown` when its
// lease expires: a database that does not answer for a moment is tried
// again, not given up at the first refused connection. Found by review.
func TestRecordNotSentOutlastsAnOutage(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "drain-outage", `{"n":1}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	job, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}

	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	var down atomic.Bool
	down.Store(true)
	refused := make(chan struct{})
	var once sync.Once
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			once.Do(func() { close(refused) })
			return nil, errors.New("test: database unreachable")
		}
		return dialer.DialContext(ctx, network, addr)
	}
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{KeyRetention: time.Hour})

	go func() { <-refused; down.Store(false) }() // back after the first refusal
	if err := st.RecordNotSent(ctx, job.Attempts[0].ID, "the request was never sent: the router was shutting down"); err != nil {
		t.Fatalf("RecordNotSent across a brief outage: %v", err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'cancelled' AND error->>'kind' = 'not_sent'`, job.Attempts[0].ID); n != 1 {
		t.Fatal("the attempt is not recorded as not sent")
	}
}
