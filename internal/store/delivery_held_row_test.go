package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// deliveryBatchContext stands in for the context the group gives a batch
// (execTimeout, 30 s): a bound on the whole batch, far above what a batch
// with one held row needs once each rerun write waits at most the batch's
// lock wait (a couple of seconds).
const deliveryBatchContext = 30 * time.Second

// An event row held by another transaction (an operator's open psql
// transaction, a retention delete, another replica's blocked write) fails
// the batch after its lock wait, and then only that event's own write: its
// reruns alone (its freeze, its try's record) give up after the same lock wait
// (lock_not_available), and the writes sorted after them, of rows nobody
// holds, are carried out. Before, the
// rerun waited with no lock_timeout until the batch's context ended (30 s),
// and every write after it failed with context deadline exceeded — tries
// whose delivery had succeeded went unrecorded and were sent again (found in
// review).
func TestDeliveryHeldEventRowFailsOnlyItsOwnWrite(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ev := events(t, b.st, b.db, 4)
	slices.Sort(ev) // the batch runs its writes in event id order
	b.hold(t, `SELECT 1 FROM job_events WHERE id = $1 FOR UPDATE`, ev[1])

	try := func(id string) store.DeliveryTry {
		return store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
			StatusCode: 204, Status: store.EventDelivered}
	}
	type outcome struct {
		bodies             [][]byte
		freezeErrs, tryErr []error
	}
	got := make(chan outcome, 1)
	go func() {
		bctx, cancel := context.WithTimeout(ctx, deliveryBatchContext)
		defer cancel()
		bodies, freezeErrs, tryErrs := b.st.DeliveryBatch(bctx,
			[]store.FreezeArg{{EventID: ev[1], Body: []byte(`{"held":true}`)}, {EventID: ev[3], Body: []byte(`{"after":true}`)}},
			[]store.DeliveryTry{try(ev[0]), try(ev[1]), try(ev[2])})
		got <- outcome{bodies, freezeErrs, tryErrs}
	}()
	// The batch's wait for the held row, and its reruns', last its lock
	// wait each (100 ms), and the holder is never released: a poll for the
	// wait (awaitBlockedBy) that ran late missed it and failed the test
	// after hangGuard. The writes' outcomes below (the held event's gave up
	// on its row: lock_not_available) say that it waited.
	var o outcome
	select {
	case o = <-got:
	case <-time.After(transitionHangGuard):
		t.Fatalf("the batch still waited for the held event row after %s", transitionHangGuard)
	}
	t.Logf("try errors: %v; freeze error: %v", o.tryErr, o.freezeErrs)
	if o.tryErr[0] != nil {
		t.Errorf("write of the event before the held one: %v", o.tryErr[0])
	}
	if !store.Busy(o.tryErr[1]) {
		t.Errorf("write of the held event: %v; want it to give up on the held row (lock_not_available)", o.tryErr[1])
	}
	if o.tryErr[2] != nil {
		t.Errorf("write of an event nobody holds, after the held one: %v; want it recorded (its delivery succeeded, and unrecorded it is sent again)", o.tryErr[2])
	}
	if !store.Busy(o.freezeErrs[0]) || o.bodies[0] != nil {
		t.Errorf("freeze of the held event: body %q, err %v; want it to give up on the held row (lock_not_available)", o.bodies[0], o.freezeErrs[0])
	}
	if o.freezeErrs[1] != nil || string(o.bodies[1]) != `{"after":true}` {
		t.Errorf("freeze of an event nobody holds, after the held one: body %q, err %v", o.bodies[1], o.freezeErrs[1])
	}
	for _, i := range []int{0, 2} {
		if n := count(t, b, `SELECT count(*) FROM webhook_deliveries WHERE event_id = $1`, ev[i]); n != 1 {
			t.Errorf("event %d has %d recorded tries, want 1", i, n)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_deliveries WHERE event_id = $1`, ev[1]); n != 0 {
		t.Errorf("the held event has %d recorded tries, want none (its write gave up)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE id = $1 AND body IS NULL`, ev[1]); n != 1 {
		t.Errorf("the held event's body was frozen, though its freeze gave up")
	}
}
