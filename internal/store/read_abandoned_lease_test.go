package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A delivery's read that its caller stops waiting for while it is queued
// behind another batch (its River job's time ran out, the replica is
// stopping) still claims the event's send lease once its batch runs
// (group.await: "its batch executes it either way"). The worker, told the
// read failed, releases its lease at once (webhook.Worker.work:
// releaseLease after a failed readEvent) — before the claim exists — and
// the claim that lands afterwards is held by nobody: the event's next try,
// due within a second or so, finds it held and waits for it to run out
// (webhooks.timeout + record timeout + margin), which the release was made
// to prevent.
func TestAbandonedQueuedReadLeavesNoSendLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	st := db.Store
	ids := events(t, st, db, 2)

	// Something holds up the batch in flight: a lock on a table its read
	// joins (an operator's DDL, a slow statement: anything that makes a
	// batch last longer than a waiter's context).
	tx := lockWebhookOwners(t, db)
	first := make(chan error, 1)
	go func() {
		_, _, _, err := st.ClaimEventForDelivery(ctx, ids[0], store.SendClaim{Token: "first", For: time.Minute})
		first <- err
	}()
	// Wait until that batch is waiting on the lock.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE relation = 'webhook_owners'::regclass AND NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first read's batch never waited on the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The second delivery's read queues behind it, and its caller gives up.
	const token = "abandoned"
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, _, err := st.ClaimEventForDelivery(rctx, ids[1], store.SendClaim{Token: token, For: time.Minute})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the abandoned read: %v; want its context's deadline", err)
	}
	// What the worker does then (worker.go, after a failed readEvent).
	if err := st.ReleaseSendLease(ctx, ids[1], token); err != nil {
		t.Fatal(err)
	}

	if err := tx.Commit(ctx); err != nil { // the batch in flight goes on, then the queued one
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The event's next try (River's retry, due within a second or so) reads
	// it: queued after the abandoned read, in its batch or a later one.
	next(t, ctx, db, st, ids[1])
}

// next is the event's next try's read with a claim: it must get the send
// lease, which nobody holds.
func next(t *testing.T, ctx context.Context, db *testdb.DB, st *store.Store, id string) {
	t.Helper()
	ev, _, _, err := st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "next", For: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if ev.SendLease.Held {
		return
	}
	var sender *string
	if err := db.Pool.QueryRow(ctx, `SELECT sender FROM job_events WHERE id = $1`, id).Scan(&sender); err != nil {
		t.Fatal(err)
	}
	held := "nobody"
	if sender != nil {
		held = fmt.Sprintf("%q", *sender)
	}
	t.Fatalf("event %s: the next try's claim found the send lease held by %s for %s more, a read its caller abandoned and whose lease it released; "+
		"the event's next try waits that long for nothing", id, held, ev.SendLease.Left.Round(time.Second))
}

// A read its caller stops waiting for while its batch is under way (the
// batch was built before the caller gave up, so it claims the lease) has the
// batch release that lease once it has run: the caller, told the read
// failed, released it before the claim committed.
func TestAbandonedReadInFlightLeavesNoSendLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	st := db.Store
	ids := events(t, st, db, 2)

	tx := lockWebhookOwners(t, db)
	// The first read leads; it takes its batch only once the second read
	// is queued, so that both go out in that one batch, which the lock
	// then holds in flight.
	firstQueued, queued := make(chan struct{}), make(chan struct{})
	var lead, one, two sync.Once
	st.SetEventReadHooks(func() { lead.Do(func() { <-queued }) }, func(n int) {
		switch n {
		case 1:
			one.Do(func() { close(firstQueued) })
		case 2:
			two.Do(func() { close(queued) })
		}
	})
	first := make(chan error, 1)
	go func() {
		_, _, _, err := st.ClaimEventForDelivery(ctx, ids[0], store.SendClaim{})
		first <- err
	}()
	<-firstQueued
	const token = "abandoned"
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	second := make(chan error, 1)
	go func() {
		_, _, _, err := st.ClaimEventForDelivery(rctx, ids[1], store.SendClaim{Token: token, For: time.Minute})
		second <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE relation = 'webhook_owners'::regclass AND NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch never waited on the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // the second read's caller gives up while its batch waits
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned read: %v; want its context's cancellation", err)
	}
	if err := st.ReleaseSendLease(ctx, ids[1], token); err != nil { // as the worker does
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil { // the batch goes on and claims the lease
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	next(t, ctx, db, st, ids[1])
}

// lockWebhookOwners holds webhook_owners locked in a transaction of its own
// (the test rolls it back to let the batches it holds up go on; so does the
// test's end), so that a batch of event reads, which joins it, waits in
// flight.
func lockWebhookOwners(t *testing.T, db *testdb.DB) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `LOCK TABLE webhook_owners IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return tx
}
