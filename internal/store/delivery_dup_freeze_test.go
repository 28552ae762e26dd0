package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// Two freezes of one event in one batch (the rescued delivery beside the
// stuck one, which execEventReads already expects to share a batch) both get
// the event's stored body, as two reads of one event do. Before, only the
// last request of the id was handed the statement's one row, and the other
// was told ErrNotFound: its delivery failed with "store event body: not
// found" (found in review).
func TestTwoFreezesOfOneEventInABatchBothGetTheBody(t *testing.T) {
	b := setup(t)
	ev := events(t, b.st, b.db, 1)
	bodies, errs, _ := b.st.DeliveryBatch(context.Background(), []store.FreezeArg{
		{EventID: ev[0], Body: []byte(`{"a":1}`)},
		{EventID: ev[0], Body: []byte(`{"a":2}`)},
	}, nil)
	if errs[0] != nil || string(bodies[0]) != `{"a":1}` {
		t.Errorf("first freeze of the event: body %q, err %v; want the body it froze", bodies[0], errs[0])
	}
	if errs[1] != nil || string(bodies[1]) != `{"a":1}` {
		t.Errorf("second freeze of the same event in the batch: body %q, err %v; want the body the first froze", bodies[1], errs[1])
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE id = $1 AND body = '{"a":1}'`, ev[0]); n != 1 {
		t.Errorf("the event's stored body is not the first freeze's")
	}
}
