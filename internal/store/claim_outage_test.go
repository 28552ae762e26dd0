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

// outageStore is a store on b's database with one connection, whose commit
// answer can be dropped (d) and whose dials can be refused (down): a
// PostgreSQL restart or fail-over right after a commit.
func outageStore(t *testing.T, b *bundle) (st *store.Store, d *answerDropper, down *atomic.Bool) {
	t.Helper()
	st, _, d, down = outageStoreWithPool(t, b, store.Options{KeyRetention: time.Hour})
	return st, d, down
}

// outageStoreWithPool is outageStore with opt, and its pool, for a test that
// closes it as a server does at shutdown (closed again at the test's end).
func outageStoreWithPool(t *testing.T, b *bundle, opt store.Options) (st *store.Store, pool *pgxpool.Pool, d *answerDropper, down *atomic.Bool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	d = &answerDropper{dropped: make(chan struct{})}
	down = new(atomic.Bool)
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
	pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, opt), pool, d, down
}

// awaitHandOver waits for one background hand-over of a lost claim to end,
// and fails the test unless it ended well.
func awaitHandOver(t *testing.T, handedOver <-chan error) {
	t.Helper()
	select {
	case err := <-handedOver:
		if err != nil {
			t.Fatalf("the hand-over of a lost claim ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a lost claim was never handed over")
	}
}

// A claim whose commit's answer is lost while the database then stays
// unreachable for longer than CreateJob retries is reported failed to its
// caller; if it committed, its job holds this replica's lease (its first
// attempt, if any, `running` and never sent) with nobody orchestrating it.
// The store settles it in the background once the database answers again:
// the attempt `cancelled` not_sent and the lease released, so that recovery
// starts the job exactly once (SPEC §6.8) — instead of the attempt's lease
// expiring into `unknown`, waiting for an operator although no provider was
// called. A job whose caller sent no key is failed instead: told the
// creation failed, its caller cannot reach it. Found by review.
func TestClaimAnswerLostThenOutageIsHandedOver(t *testing.T) {
	for _, c := range []struct {
		name           string
		unkeyed, first bool
	}{
		{"keyed", false, true},
		{"unkeyed", true, true},
		{"keyed without a first attempt", false, false},
		{"unkeyed without a first attempt", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			st, d, down := outageStore(t, b)
			handedOver := make(chan error, 1)
			st.SetOnLostClaim(func(err error) { handedOver <- err })
			nj := newJob(t, "acme", "triage", "outage", `{"n":1}`)
			nj.LeaseOwner, nj.LeaseFor, nj.Unkeyed = "replica-a", time.Minute, c.unkeyed
			if c.first {
				nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
			}
			d.onDrop = func() { down.Store(true) } // the database goes away right after the commit, before the claim is tried again
			d.armed.Store(true)
			if _, _, err := st.CreateJob(ctx, nj); err == nil {
				t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
			}
			down.Store(false)
			awaitHandOver(t, handedOver)
			if c.unkeyed {
				if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state = 'failed'
						AND error LIKE '%sent no Idempotency-Key%'`); n != 1 {
					t.Fatal("the committed job of a caller without a key was not failed")
				}
			} else if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state IN ('pending', 'running')
					AND lease_owner IS NULL AND lease_expires_at <= now()`); n != 1 {
				t.Fatal("the committed job was not handed over: want it live, its lease released")
			}
			if c.first {
				if n := count(t, b, `SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id
						WHERE j.idempotency_key = 'outage' AND a.state = 'cancelled' AND a.error->>'kind' = 'not_sent'`); n != 1 {
					t.Fatal("the first attempt, never sent, is not recorded as not_sent")
				}
			}
			if ids, err := b.st.ExpireAttemptLeases(ctx); err != nil || len(ids) != 0 {
				t.Fatalf("recovery made jobs %v unknown (err %v): no attempt was in flight", ids, err)
			}
			if !c.unkeyed { // its unsent attempt, if any, counts against nothing
				checkUnsentNotCounted(t, b, jobByKey(t, b, "outage"), 0)
			}
		})
	}
}

// A claim whose connection was refused before anything was sent certainly
// did not commit: nothing is handed over in the background (an outage would
// otherwise start one such goroutine per request, each dialling for a
// minute).
func TestClaimNeverSentIsNotHandedOver(t *testing.T) {
	b := setup(t)
	st, _, down := outageStore(t, b)
	down.Store(true)
	nj := newJob(t, "acme", "triage", "refused", `{"n":1}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	if _, _, err := st.CreateJob(context.Background(), nj); err == nil {
		t.Fatal("CreateJob succeeded with the database unreachable")
	}
	if n := st.LostClaims(); n != 0 {
		t.Fatalf("%d claims handed over in the background, want none: nothing reached the database", n)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("jobs = %d", n)
	}
}

// The same with two claims in one batch, the usual case under load: after the
// batch's answer is lost its claims are retried one by one, and with the
// database down each retry fails on a refused connection — which must not
// hide that the batch itself may have committed. Both jobs are handed over.
// Found by review.
func TestBatchedClaimsAnswerLostThenOutageAreHandedOver(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	st, d, down := outageStore(t, b)
	handedOver := make(chan error, 2)
	st.SetOnLostClaim(func(err error) { handedOver <- err })
	queued := make(chan int, 10)
	st.SetOnQueued(func(n int) { queued <- n })
	mk := func(key string) store.NewJob {
		nj := newJob(t, "acme", "triage", key, `{"n":1}`)
		nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
		nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Minute
		return nj
	}
	var once sync.Once
	errB := make(chan error, 1)
	st.SetBeforeSelfBatch(func() {
		once.Do(func() { // the first claim leads: let the second queue behind it, into its batch
			go func() { _, _, err := st.CreateJob(ctx, mk("outage-b")); errB <- err }()
			for n := range queued {
				if n == 2 {
					return
				}
			}
		})
	})
	d.onDrop = func() { down.Store(true) } // the database goes away right after the commit, before the claims are tried again
	d.armed.Store(true)
	_, _, errA := st.CreateJob(ctx, mk("outage-a"))
	if errB := <-errB; errA == nil || errB == nil {
		t.Fatalf("CreateJob: %v / %v: the outage did not outlast the retries, and the test shows nothing", errA, errB)
	}
	down.Store(false)
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key IN ('outage-a', 'outage-b')`); n != 2 {
		t.Fatalf("committed jobs = %d, want 2: the batch did not commit, and the test shows nothing", n)
	}
	awaitHandOver(t, handedOver)
	awaitHandOver(t, handedOver)
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key IN ('outage-a', 'outage-b') AND lease_owner IS NULL`); n != 2 {
		t.Fatalf("jobs handed over = %d, want 2", n)
	}
}

// An outage longer than the first attempt's lease lets recovery mark the
// attempt `unknown` (lease_expired) before the hand-over can run, and the job
// with it; but the router knows the request was never sent (its creation
// failed first). The hand-over records the attempt as not_sent and runs the
// job again, as a `failed` resolution would — or fails it, for a caller
// without a key. Found by review.
func TestLostClaimOutlastingItsLeaseIsNotLeftUnknown(t *testing.T) {
	for _, unkeyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "keyed", true: "unkeyed"}[unkeyed], func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			st, d, down := outageStore(t, b)
			handedOver := make(chan error, 1)
			st.SetOnLostClaim(func(err error) { handedOver <- err })
			nj := newJob(t, "acme", "triage", "long-outage", `{"n":1}`)
			nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
			nj.LeaseOwner, nj.LeaseFor, nj.Unkeyed = "replica-a", time.Millisecond, unkeyed
			d.onDrop = func() { down.Store(true) } // the database goes away right after the commit, before the claim is tried again
			d.armed.Store(true)
			if _, _, err := st.CreateJob(ctx, nj); err == nil {
				t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
			}
			// Still down for this replica; another's recovery finds the
			// attempt's lease expired.
			if ids, err := b.st.ExpireAttemptLeases(ctx); err != nil || len(ids) != 1 {
				t.Fatalf("recovery: %v %v, want the lost claim's job made unknown", ids, err)
			}
			down.Store(false)
			awaitHandOver(t, handedOver)
			want := `state = 'running' AND lease_owner IS NULL`
			if unkeyed {
				want = `state = 'failed'`
			}
			if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'long-outage' AND `+want); n != 1 {
				t.Fatalf("the job is not %s after the hand-over", want)
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE state = 'cancelled' AND error->>'kind' = 'not_sent'`); n != 1 {
				t.Fatal("the never-sent attempt is not recorded as not_sent")
			}
			if !unkeyed { // the never-sent attempt counts against nothing
				checkUnsentNotCounted(t, b, jobByKey(t, b, "long-outage"), 0)
			}
		})
	}
}
