package store_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// A claim whose commit's answer is lost while the database then stays
// unreachable for longer than CreateJob retries (a PostgreSQL restart or
// fail-over) is reported failed to its caller; if it committed, its job is
// running with its first attempt `running`, never sent, and nobody
// orchestrating it. The store hands such a job over in the background once
// the database answers again — the attempt `cancelled` not_sent, the lease
// released — so that recovery starts it exactly once (SPEC §6.8), instead of
// letting the attempt's lease expire into `unknown`, which would wait for an
// operator although no provider was called. A job whose caller sent no key
// is failed instead: told the creation failed, its caller cannot reach it.
// Found by review.
func TestClaimAnswerLostThenOutageIsHandedOver(t *testing.T) {
	for _, unkeyed := range []bool{false, true} {
		name := "keyed"
		if unkeyed {
			name = "unkeyed"
		}
		t.Run(name, func(t *testing.T) { claimAnswerLostThenOutage(t, unkeyed) })
	}
}

func claimAnswerLostThenOutage(t *testing.T, unkeyed bool) {
	b := setup(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	d := &answerDropper{dropped: make(chan struct{})}
	var down atomic.Bool
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			return nil, errors.New("test: database unreachable")
		}
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &dropConn{Conn: c, d: d}, nil
	}
	cfg.MinConns, cfg.MaxConns = 0, 1 // one connection: the one whose answer is dropped
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{KeyRetention: time.Hour})
	handedOver := make(chan error, 1)
	st.SetOnLostClaim(func(err error) { handedOver <- err })

	nj := newJob(t, "acme", "triage", "outage", `{"n":1}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	nj.Unkeyed = unkeyed
	d.armed.Store(true)
	go func() { <-d.dropped; down.Store(true) }() // the database goes away right after the commit
	if _, _, err := st.CreateJob(ctx, nj); err == nil {
		t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
	}
	down.Store(false)
	select {
	case err := <-handedOver:
		if err != nil {
			t.Fatalf("the hand-over of the lost claim ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the lost claim was never handed over")
	}
	if unkeyed {
		if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state = 'failed'
				AND error LIKE '%sent no Idempotency-Key%'`); n != 1 {
			t.Fatal("the committed job of a caller without a key was not failed")
		}
	} else if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state = 'running'
			AND lease_owner IS NULL AND lease_expires_at <= now() AND attempt_base = 1`); n != 1 {
		t.Fatal("the committed job was not handed over: want it running, its lease released, its unsent attempt not counted")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id
			WHERE j.idempotency_key = 'outage' AND a.state = 'cancelled' AND a.error->>'kind' = 'not_sent'`); n != 1 {
		t.Fatal("the first attempt, never sent, is not recorded as not_sent")
	}
	if ids, err := b.st.ExpireAttemptLeases(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("recovery made jobs %v unknown (err %v): no attempt was in flight", ids, err)
	}
}
