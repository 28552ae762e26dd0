package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Claims run alone (a key row held by another transaction: an operator's open
// psql transaction, a replica cut off mid-batch whose locks the server keeps
// until its TCP keepalive ends the session) each hold a pool connection for
// their whole alone wait, and nothing bounds how many do at once. Clients
// resending the requests of a few held keys (503 busy, Retry-After: 1; every
// resend of a key found held goes alone at once, heldKeys) take every
// connection of the replica's pool, and every other tenant's creation on the
// replica then fails: its batch gets no connection (acquireError), four
// times. The lost claims' hand-overs were made to take turns (one connection
// per replica) for this very reason (commit 85b6593); the client resends of
// the same keys were not. Now the items run alone take turns (aloneTurns: a
// quarter of the pool, at least one), and the rest of the pool stays with
// the batches.
//
// The pool here has 3 connections (one turn) and the alone wait is
// lengthened so that "every resend waits alone" is a state the test observes
// (pg_stat_activity, and the resends waiting for a turn), not a duration.
func TestAloneClaimsOfHeldKeysTakeTheWholePool(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const conns = 3
	_, st := modeStore(t, b, "cache_statement", conns)
	st.SetBatchAcquireWait(time.Second) // a batch's wait for a connection (5 s in production)

	var keys []string
	for i := range conns {
		k := fmt.Sprintf("held-%d", i)
		keys = append(keys, k)
		if _, created, err := st.CreateJob(ctx, newJob(t, "acme", "triage", k, `{"k":"`+k+`"}`)); err != nil || !created {
			t.Fatalf("create %s: created %v, err %v", k, created, err)
		}
	}
	// An open transaction (outside st's pool) holds the keys' rows.
	holder, pid := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = ANY ($1) FOR UPDATE`, keys)
	defer store.SetAloneLockWait(10 * time.Minute)()

	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	var waiting atomic.Int32 // resends that found every alone turn taken
	st.SetOnAloneTurnWait(func() { waiting.Add(1) })
	t.Cleanup(func() { st.SetOnAloneTurnWait(nil) })
	resent := make(chan error, conns)
	for _, k := range keys {
		go func() {
			_, _, err := st.CreateJob(guard, newJob(t, "acme", "triage", k, `{"k":"`+k+`"}`))
			resent <- err
		}()
	}
	// Every resend waits alone: on its key's row, or for a turn to.
	deadline := time.Now().Add(hangGuard)
	for count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid)+
		int(waiting.Load()) < conns {
		if time.Now().After(deadline) {
			t.Fatalf("the %d resends never all waited alone", conns)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Another tenant's new job, on the same replica, meanwhile.
	_, created, err := st.CreateJob(guard, newJob(t, "globex", "triage", "unrelated", `{"k":"globex"}`))

	_ = holder.Rollback(ctx)
	for range keys {
		if rerr := <-resent; rerr != nil {
			t.Logf("resend after the rows were freed: %v", rerr)
		}
	}
	if err != nil || !created {
		t.Fatalf("another tenant's creation while %d claims of held keys wait alone (pool of %d): created %v, err %v\n"+
			"the claims run alone hold every connection of the pool for their whole wait: nothing bounds how many run at once",
			conns, conns, created, err)
	}
}
