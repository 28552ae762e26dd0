package webhook

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// cancelledJob creates a job of owner and cancels it, so that the outbox
// writes its one event, and returns the job's id.
func cancelledJob(t *testing.T, db *testdb.DB, owner string) string {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"k":"1"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: owner, Operation: "op", IdempotencyKey: "1",
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.CancelJob(ctx, owner, j.ID); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// cancelledJobEvent is cancelledJob with idempotency key key, so that one
// owner may have many; it returns the id of the job's one event.
func cancelledJobEvent(t *testing.T, db *testdb.DB, owner, key string) string {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"k":"1"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: owner, Operation: "op", IdempotencyKey: key,
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.CancelJob(ctx, owner, j.ID); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Store.JobEvents(ctx, owner, j.ID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events of job %s: %v, %v", j.ID, evs, err)
	}
	return evs[0].ID
}
