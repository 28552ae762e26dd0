package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// closableConns captures the first connection of its pool written to once
// armed (the one carrying the next batch), so that a test can close its
// client socket while the server is still working on that batch: the
// backend notices only when it next writes, after it has committed.
//
// It sends no cancel request (pgx sends one as it closes a broken
// connection): the postmaster signals a cancel twice (SIGINT to the backend
// and to its process group), and the second, handled after the first had
// interrupted the held COMMIT's wait and before the wait began again, could
// not be caught there: it aborted that COMMIT, and with it the test's case
// (the claim's next try then committed the job in a transaction of its own,
// held in its own COMMIT past the hand-over's budget: a CI failure).
type closableConns struct {
	armed  atomic.Bool
	mu     sync.Mutex
	victim net.Conn
}

type captureConn struct {
	net.Conn
	cc *closableConns
}

// cancelRequestCode is the protocol's CancelRequest code, in a cancel
// request's second four bytes.
const cancelRequestCode = 80877102

func (c *captureConn) Write(p []byte) (int, error) {
	if len(p) >= 8 && binary.BigEndian.Uint32(p[4:8]) == cancelRequestCode {
		c.Conn.Close()
		return 0, errors.New("test: cancel requests are not sent (closableConns)")
	}
	if c.cc.armed.CompareAndSwap(true, false) {
		c.cc.mu.Lock()
		c.cc.victim = c.Conn
		c.cc.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// closeVictim closes the captured connection's client socket.
func (cc *closableConns) closeVictim(t *testing.T) {
	t.Helper()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.victim == nil {
		t.Fatal("no connection carried the claim: the test did not set up its case")
	}
	cc.victim.Close()
}

func closableStore(t *testing.T, b *bundle) (*store.Store, *closableConns) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	cc := &closableConns{}
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &captureConn{Conn: c, cc: cc}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{KeyRetention: time.Hour}), cc
}

// A claim whose connection is lost while the server is inside its COMMIT (a
// synchronous replica's acknowledgement, a slow fsync) — the backend goes on
// and commits later. The claim's retry (the same job) waits on the first
// try's uncommitted key row and runs into the batch's lock_timeout: a
// server-reported ERROR, which was taken as "settled, nothing stored": the
// caller was told 503 busy, and the lost claim's hand-over, not seeing the
// uncommitted job, concluded the claim had not committed. When the commit
// landed, a job existed whose first attempt was never sent, leased to this
// replica: at lease expiry it became unknown (an operator's case) although no
// provider was called. Found by review.
//
// The slow commit is a deferred constraint trigger on the test's own key that
// waits, inside COMMIT, for an advisory lock the test holds; the client's
// socket is closed while it waits.
//
// And the hand-over gave up after its minute of retries (lostClaimRetryFor)
// although every try had found the key's row still written by the claim's
// try: a COMMIT held longer (a synchronous standby down) landed afterwards,
// leased to this replica with its first attempt never sent. Found in CI.
func TestSlowCommitOfLostClaim(t *testing.T) {
	t.Run("commit lands while the claim is retried", func(t *testing.T) {
		b, st, lk, job, err := slowLostClaim(t, func(w slowClaimWait) bool { return w.claimWaits >= 2 })
		if err != nil || job == nil {
			t.Fatalf("CreateJob: err=%v; want the job its first try committed (created)", err)
		}
		var stored string
		if err := b.db.Pool.QueryRow(context.Background(), `SELECT id::text FROM jobs WHERE idempotency_key = $1`, lk).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if job.ID != stored || job.State != store.JobRunning || len(job.Attempts) != 1 || job.HeldBy != "replica-a" {
			t.Fatalf("told job %s (%s, %d attempts, held by %q); stored %s", job.ID, job.State, len(job.Attempts), job.HeldBy, stored)
		}
		if n := st.LostClaims(); n != 0 {
			t.Fatalf("lost claims handed over = %d, want 0: the caller has the job and sends its first attempt", n)
		}
	})
	t.Run("commit lands after the claim gave up", func(t *testing.T) {
		b, st, lk, job, err := slowLostClaim(t, func(w slowClaimWait) bool { return w.otherWaits > 0 || w.lostClaimEnded })
		wantHandedOver(t, b, st, lk, job, err)
	})
	t.Run("commit lands after the hand-over's retry budget", func(t *testing.T) {
		// Spent by the hand-over's first try, which waits for the key's row
		// and finds it still held: a hand-over that gave up then ends
		// before its second wait, with the COMMIT still held.
		defer store.SetLostClaimRetryFor(time.Nanosecond)()
		b, st, lk, job, err := slowLostClaim(t, func(w slowClaimWait) bool { return w.otherWaits >= 2 || w.lostClaimEnded })
		wantHandedOver(t, b, st, lk, job, err)
	})
}

// wantHandedOver checks what slowLostClaim returned for a claim whose COMMIT
// was let through after CreateJob had given up: the lost answer, and the job
// its first try committed handed over.
func wantHandedOver(t *testing.T, b *bundle, st *store.Store, lk string, job *store.Job, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("CreateJob created job %s although its key was held by its own first try for all its tries", job.ID)
	}
	if errors.Is(err, store.ErrBusy) || store.Busy(err) {
		t.Errorf("CreateJob: %v; told busy (nothing stored) while its own first try may have committed", err)
	} else if !store.Unavailable(err) {
		t.Errorf("CreateJob: %v; want the lost answer (Unavailable): its outcome is not known", err)
	}
	var state, lease, attState string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT j.state, coalesce(j.lease_owner, ''), a.state
		FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE j.idempotency_key = $1`, lk).Scan(&state, &lease, &attState); err != nil {
		t.Fatalf("the first try's job: %v (its commit landed)", err)
	}
	if lease != "" || attState != store.AttemptCancelled {
		t.Fatalf("the committed job of a claim its caller was told failed: state %s, lease %q, first attempt %s; "+
			"want it handed over (no lease, the never-sent attempt cancelled)", state, lease, attState)
	}
	if n := st.LostClaims(); n != 1 {
		t.Fatalf("lost claims handed over = %d, want 1", n)
	}
}

// slowClaimWait is what a slow-commit test has seen so far while the first
// try's COMMIT is held.
type slowClaimWait struct {
	claimWaits     int  // lock waits of claim statements on the first try's transaction
	otherWaits     int  // lock waits of other statements on it (the hand-over's tries)
	lostClaimEnded bool // handOverLostClaim has ended
}

// slowLostClaim runs a claim (a first attempt, leased to replica-a) whose
// first try's COMMIT is held and whose connection is closed meanwhile; the
// commit is let through once release says so (or CreateJob has returned),
// and the test then waits for the hand-over of the lost claim, if any, and
// for the first try's transaction to end. It returns CreateJob's answer.
func slowLostClaim(t *testing.T, release func(slowClaimWait) bool) (*bundle, *store.Store, string, *store.Job, error) {
	t.Helper()
	b := setup(t)
	ctx := context.Background()
	lockKey := rand.Int64N(1<<31-1) + 1
	const key = "slow-commit"
	_, err := b.db.Pool.Exec(ctx, fmt.Sprintf(`
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			PERFORM pg_advisory_xact_lock(%d);
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON idempotency_keys DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW WHEN (NEW.idempotency_key = '%s') EXECUTE FUNCTION slow_commit();`, lockKey, key))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		t.Fatal(err)
	}
	released := false
	unlock := func() {
		if !released {
			released = true
			if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockKey); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer unlock()

	st, cc := closableStore(t, b)
	lostEnded := make(chan struct{})
	st.SetOnLostClaim(func(error) { close(lostEnded) })
	nj := newJob(t, "acme", "triage", key, `{"n":1}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	type out struct {
		job *store.Job
		err error
	}
	done := make(chan out, 1)
	cc.armed.Store(true)
	go func() {
		j, created, err := st.CreateJob(ctx, nj)
		if err == nil && !created {
			err = errors.New("test: CreateJob found an existing job")
		}
		done <- out{j, err}
	}()

	// The first try's backend waits, inside its COMMIT, for the lock held here.
	var firstPID int32
	var firstXID string
	deadline := time.Now().Add(hangGuard)
	for {
		err := b.db.Pool.QueryRow(ctx, `SELECT l.pid, a.backend_xid::text FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE l.locktype = 'advisory' AND NOT l.granted AND l.classid::bigint = 0 AND l.objid::bigint = $1 AND l.objsubid = 1
			  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, lockKey).Scan(&firstPID, &firstXID)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the claim's first try never waited inside its COMMIT within %s: the test did not set up its case", hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
	cc.closeVictim(t)

	// Let the commit through when release says so, or once CreateJob has
	// given its answer and the hand-over of its lost claim, if it started
	// one, has ended or waited on the first try twice (once could be a
	// hand-over about to give up).
	var res *out
	seen := map[string]bool{}
	w := slowClaimWait{}
	deadline = time.Now().Add(hangGuard)
	for !release(w) && (res == nil || st.LostClaims() > 0 && !w.lostClaimEnded && w.otherWaits < 2) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s with the first try's COMMIT held, neither the case's moment to let it through nor CreateJob's answer "+
				"(and the hand-over's end or wait) came: seen %+v, CreateJob answered: %v", hangGuard, w, res != nil)
		}
		select {
		case o := <-done:
			res = &o
		case <-lostEnded:
			w.lostClaimEnded = true
			lostEnded = nil
		default:
		}
		rows, err := b.db.Pool.Query(ctx, `SELECT l.pid, l.waitstart::text, a.query LIKE '%WITH input AS%'
			FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE l.locktype = 'transactionid' AND NOT l.granted AND l.transactionid::text = $1 AND l.waitstart IS NOT NULL`, firstXID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var pid int32
			var since string
			var claim bool
			if err := rows.Scan(&pid, &since, &claim); err != nil {
				t.Fatal(err)
			}
			if id := fmt.Sprint(pid, since); !seen[id] {
				seen[id] = true
				if claim {
					w.claimWaits++
				} else {
					w.otherWaits++
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("the first try's commit let through after %+v (CreateJob answered: %v)", w, res != nil)
	unlock()
	if res == nil {
		select {
		case o := <-done:
			res = &o
		case <-time.After(hangGuard):
			t.Fatalf("CreateJob did not return within %s of its first try's commit", hangGuard)
		}
	}
	if st.LostClaims() > 0 && lostEnded != nil {
		select {
		case <-lostEnded:
		case <-time.After(hangGuard):
			t.Fatalf("the hand-over of the lost claim did not end within %s of its first try's commit", hangGuard)
		}
	}
	// The first try's transaction ends (it commits; its backend then finds
	// its client gone).
	deadline = time.Now().Add(hangGuard)
	for count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND backend_xid::text = $2`, firstPID, firstXID) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the first try's transaction (backend %d, xid %s) did not end within %s of its commit being let through", firstPID, firstXID, hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = $1`, key); n != 1 {
		t.Fatalf("jobs = %d, want 1: the first try's commit did not land, the test did not set up its case", n)
	}
	// Written by the first try's own transaction, not by a later try's.
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = $1 AND xmin::text = $2`, key, firstXID); n != 1 {
		t.Fatalf("the key's row was not written by the first try's transaction (xid %s): that try aborted, the test did not set up its case", firstXID)
	}
	return b, st, key, res.job, res.err
}
