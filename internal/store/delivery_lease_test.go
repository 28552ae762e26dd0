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

// A try's release of its send lease frees the lease it holds, and leaves
// one another try holds: released by the try whose lease ran out, another
// try's claim since is kept.
func TestReleaseSendLease(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	st := db.Store
	id := events(t, st, db, 1)[0]
	lease := func() (sender *string, live bool) {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `SELECT sender, coalesce(sending_until > now(), false) FROM job_events WHERE id = $1`, id).Scan(&sender, &live); err != nil {
			t.Fatal(err)
		}
		return sender, live
	}
	if ev, _, _, err := st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "a", For: time.Minute}); err != nil || !ev.SendLease.Held {
		t.Fatalf("a's claim: %+v, %v; want held", ev, err)
	}
	if err := st.ReleaseSendLease(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	if sender, live := lease(); sender == nil || *sender != "a" || !live {
		t.Fatalf("after b's release of a's lease: sender %v, live %v; want a's, live", sender, live)
	}
	if err := st.ReleaseSendLease(ctx, id, "a"); err != nil {
		t.Fatal(err)
	}
	if sender, live := lease(); sender != nil || live {
		t.Fatalf("after a's release: sender %v, live %v; want none", sender, live)
	}
	if err := st.ReleaseSendLease(ctx, id, "a"); err != nil {
		t.Fatalf("a's release again: %v; want no error", err)
	}
	if ev, _, _, err := st.ClaimEventForDelivery(ctx, id, store.SendClaim{Token: "b", For: time.Minute}); err != nil || !ev.SendLease.Held {
		t.Fatalf("b's claim after a's release: %+v, %v; want held", ev, err)
	}
	if err := st.ReleaseSendLease(ctx, id, "a"); err != nil {
		t.Fatal(err)
	}
	if sender, live := lease(); sender == nil || *sender != "b" || !live {
		t.Fatalf("after a's release of b's lease: sender %v, live %v; want b's, live", sender, live)
	}
	if err := st.ReleaseSendLease(ctx, "not-a-uuid", "a"); err != nil {
		t.Fatalf("a release of no event: %v; want no error", err)
	}
}
