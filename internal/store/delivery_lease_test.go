package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An event's send lease: one try's claim holds it, another's finds it live
// with about its length left, the record of a try that does not hold it
// leaves it, and the record of the try that holds it frees it.
func TestEventSendLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	st := db.Store
	id := events(t, st, db, 1)[0]
	a := store.SendClaim{Token: "a", For: time.Minute}
	ev, _, _, err := st.ClaimEventForDelivery(ctx, id, a)
	if err != nil || !ev.SendLease.Held || ev.DBNow.IsZero() {
		t.Fatalf("the first claim: %+v, %v; want held, with the database's now()", ev, err)
	}
	if ev, _, _, err = st.ClaimEventForDelivery(ctx, id, a); err != nil || !ev.SendLease.Held {
		t.Fatalf("the first claim again (its own): %+v, %v; want held", ev.SendLease, err)
	}
	ev, _, _, err = st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "b", For: time.Minute})
	if err != nil || ev.SendLease.Held || ev.SendLease.Left <= 50*time.Second || ev.SendLease.Left > time.Minute {
		t.Fatalf("another claim: %+v, %v; want not held, about a minute left", ev.SendLease, err)
	}
	try := store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
		StatusCode: 503, Error: "503", Status: store.EventPending}
	try.Sender = "b"
	if _, err := st.RecordDelivery(ctx, try); err != nil {
		t.Fatal(err)
	}
	if ev, _, _, err = st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "c", For: time.Minute}); err != nil || ev.SendLease.Held {
		t.Fatalf("a claim after the record of a try without the lease: %+v, %v; want the lease still a's", ev.SendLease, err)
	}
	try.Sender = "a"
	if _, err := st.RecordDelivery(ctx, try); err != nil {
		t.Fatal(err)
	}
	if ev, _, _, err = st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "c", For: time.Minute}); err != nil || !ev.SendLease.Held {
		t.Fatalf("a claim after the lease holder's record: %+v, %v; want held", ev.SendLease, err)
	}
}
