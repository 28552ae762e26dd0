package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// recordTogether records tries through RecordDelivery in one batch, queued in
// the order given (the first caller leads and holds its batch until every
// other is queued), and returns what each call returned.
func recordTogether(t *testing.T, db *testdb.DB, tries ...store.DeliveryTry) ([]string, []error) {
	t.Helper()
	st := store.New(db.Pool, store.Options{})
	queued, all := make(chan int, len(tries)), make(chan struct{})
	st.SetDeliveryBatchHooks(func() { <-all }, func(n int) { queued <- n })
	statuses, errs := make([]string, len(tries)), make([]error, len(tries))
	var wg sync.WaitGroup
	for i, d := range tries {
		wg.Go(func() { statuses[i], errs[i] = st.RecordDelivery(context.Background(), d) })
		if n := <-queued; n != i+1 {
			t.Errorf("record %d queued as the %dth of the batch", i+1, n)
		}
	}
	close(all)
	wg.Wait()
	return statuses, errs
}

// storedStatusPaths are the ways RecordDelivery's write reaches the
// database: each record in a batch of its own, records of one event in one
// batch, and each run again on its own after its batch failed (a try of no
// event breaks the batch's foreign key).
var storedStatusPaths = map[string]func(t *testing.T, db *testdb.DB, tries ...store.DeliveryTry) []string{
	"batched": func(t *testing.T, db *testdb.DB, tries ...store.DeliveryTry) []string {
		var out []string
		for _, d := range tries {
			status, err := db.Store.RecordDelivery(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, status)
		}
		return out
	},
	"one batch": func(t *testing.T, db *testdb.DB, tries ...store.DeliveryTry) []string {
		statuses, errs := recordTogether(t, db, tries...)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return statuses
	},
	"alone": func(t *testing.T, db *testdb.DB, tries ...store.DeliveryTry) []string {
		statuses, errs := recordTogether(t, db, append([]store.DeliveryTry{noEvent}, tries...)...)
		if errs[0] == nil {
			t.Fatal("the try of no event was recorded: the batch did not fail, so nothing ran on its own")
		}
		for _, err := range errs[1:] {
			if err != nil {
				t.Fatal(err)
			}
		}
		return statuses[1:]
	},
}

// RecordDelivery returns the event's status as stored, not the one the try
// computed: a try that gave up on its event (abandoned: it failed when the
// event was webhooks.retry_for old) recorded after a concurrent try delivered
// the event leaves the event delivered, and its worker must not tell of an
// abandoned event (a warning that it "will not be sent again", a count of
// router_webhook_deliveries_total{outcome="abandoned"}).
func TestRecordDeliveryReturnsTheStoredStatus(t *testing.T) {
	for name, record := range storedStatusPaths {
		t.Run(name, func(t *testing.T) {
			db := testdb.New(t, store.Options{})
			ev := events(t, db.Store, db, 3)
			delivered := func(id string) store.DeliveryTry {
				return store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
					Latency: 12 * time.Millisecond, StatusCode: 204, Status: store.EventDelivered}
			}
			gaveUp := func(id string) store.DeliveryTry {
				return store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
					Latency: 30 * time.Millisecond, StatusCode: 500, Error: "the webhook answered 500", Status: store.EventAbandoned}
			}
			failed := store.DeliveryTry{EventID: ev[2], Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
				StatusCode: 503, Error: "the webhook answered 503", Status: store.EventPending}
			got := record(t, db, delivered(ev[0]), gaveUp(ev[0]), gaveUp(ev[1]), delivered(ev[1]), failed)
			want := []string{
				store.EventDelivered, store.EventDelivered, // the later try that gave up leaves the event delivered
				store.EventAbandoned, store.EventAbandoned, // the later delivered try leaves it abandoned
				store.EventPending,
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("record %d returned %q, want %q (the event's stored status): all returned %q", i+1, got[i], want[i], got)
				}
			}
			for i, id := range ev {
				if s := soleEvent(t, db.Store, db, id).Status; s != want[2*i] {
					t.Errorf("event %d is stored %s, want %s", i+1, s, want[2*i])
				}
			}
		})
	}
}
