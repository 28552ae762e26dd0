package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// noEvent is a try of an event that does not exist: in a batch it breaks the
// batch's foreign key, so every write of that batch runs again on its own.
var noEvent = store.DeliveryTry{EventID: "00000000-0000-4000-8000-000000000009", URL: "https://acme.example/hook",
	StartedAt: time.Now(), StatusCode: 204, Status: store.EventDelivered}

// recordPaths are the ways a try's record reaches the database: in a batch
// (RecordDelivery, each record leading its own), on its own after its batch
// failed, and both records of an event in one batch.
var recordPaths = map[string]func(t *testing.T, st *store.Store, tries ...store.DeliveryTry){
	"batched": func(t *testing.T, st *store.Store, tries ...store.DeliveryTry) {
		for _, d := range tries {
			if _, err := st.RecordDelivery(context.Background(), d); err != nil {
				t.Fatal(err)
			}
		}
	},
	"alone": func(t *testing.T, st *store.Store, tries ...store.DeliveryTry) {
		for _, d := range tries {
			_, _, errs := st.DeliveryBatch(context.Background(), nil, []store.DeliveryTry{noEvent, d})
			if errs[0] == nil {
				t.Fatal("the try of no event was recorded: the batch did not fail, so nothing ran on its own")
			}
			if errs[1] != nil {
				t.Fatal(errs[1])
			}
		}
	},
	"one batch": func(t *testing.T, st *store.Store, tries ...store.DeliveryTry) {
		_, _, errs := st.DeliveryBatch(context.Background(), nil, tries)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	},
}

// A failed try whose record lands after a later try's record said delivered
// (its writer gave up waiting, but the write stayed queued and ran late) is
// added to the event's history but leaves the event delivered: its delivery
// job has ended, so a pending event would never be delivered. An abandoned
// event likewise stays abandoned.
func TestALateFailedTryLeavesTheEventEnded(t *testing.T) {
	for name, record := range recordPaths {
		t.Run(name, func(t *testing.T) {
			db := testdb.New(t, store.Options{})
			st := db.Store
			ev := events(t, st, db, 2)
			late := func(id string) store.DeliveryTry {
				return store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now().Add(-time.Minute),
					Latency: 40 * time.Millisecond, StatusCode: 500, Error: "the webhook answered 500", Status: store.EventPending}
			}
			record(t, st,
				store.DeliveryTry{EventID: ev[0], Try: 2, URL: "https://acme.example/hook", StartedAt: time.Now(),
					Latency: 12 * time.Millisecond, StatusCode: 204, Status: store.EventDelivered},
				late(ev[0]),
				store.DeliveryTry{EventID: ev[1], Try: 2, URL: "https://acme.example/hook", StartedAt: time.Now(),
					Error: "the owner has no webhook any more", Status: store.EventAbandoned},
				late(ev[1]))

			got := soleEvent(t, st, db, ev[0])
			if got.Status != store.EventDelivered || got.DeliveredAt == nil || got.LastError != nil || got.Tries != 2 {
				t.Errorf("delivered event after a late failed try: status %s, delivered_at %v, last_error %v, tries %d; want delivered with its time, no error, 2 tries",
					got.Status, got.DeliveredAt, orNil(got.LastError), got.Tries)
			}
			if len(got.Deliveries) != 2 || got.Deliveries[1].StatusCode == nil || *got.Deliveries[1].StatusCode != 500 {
				t.Errorf("history %+v: want both tries, the late one (500) last", got.Deliveries)
			}
			got = soleEvent(t, st, db, ev[1])
			if got.Status != store.EventAbandoned || got.DeliveredAt != nil || orNil(got.LastError) != "the owner has no webhook any more" || len(got.Deliveries) != 2 {
				t.Errorf("abandoned event after a late failed try: status %s, last_error %q, %d tries listed; want abandoned with its own error and both tries",
					got.Status, orNil(got.LastError), len(got.Deliveries))
			}
		})
	}
}

// Two tries that both read the event before either was recorded (a late
// record, and the retry River ran meanwhile) both ask for try 1: the history
// numbers them 1 and 2, in its order, whichever way they are recorded.
func TestTryNumbersAreTheRecordedCount(t *testing.T) {
	for name, record := range recordPaths {
		t.Run(name, func(t *testing.T) {
			db := testdb.New(t, store.Options{})
			st := db.Store
			ev := events(t, st, db, 1)[0]
			try := store.DeliveryTry{EventID: ev, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
				Error: "no answer within the webhook timeout", Status: store.EventPending}
			record(t, st, try, try)
			record(t, st, store.DeliveryTry{EventID: ev, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
				StatusCode: 204, Status: store.EventDelivered})
			got := soleEvent(t, st, db, ev)
			var nums []int
			for _, d := range got.Deliveries {
				nums = append(nums, d.Try)
			}
			if !slices.Equal(nums, []int{1, 2, 3}) || got.Tries != 3 || got.Status != store.EventDelivered {
				t.Errorf("try numbers %v, tries %d, status %s; want 1, 2, 3 (the count of recorded tries), 3, delivered", nums, got.Tries, got.Status)
			}
		})
	}
}

func soleEvent(t *testing.T, st *store.Store, db *testdb.DB, id string) *store.Event {
	t.Helper()
	evs, err := st.JobEvents(context.Background(), "acme", jobOf(t, db, id))
	if err != nil || len(evs) != 1 {
		t.Fatalf("events of %s: %+v %v", id, evs, err)
	}
	return evs[0]
}

func orNil(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
