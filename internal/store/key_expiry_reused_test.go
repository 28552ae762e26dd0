package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job whose key expired and was taken over by a new job keeps showing when
// its key expired — in the job resource, the listing and a webhook body built
// from it — not null, which says the job is not terminal and its key never
// expires.
func TestOldJobKeepsItsKeyExpiryAfterTakeover(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	old, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "reused", `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	var expired time.Time
	if err := b.db.Pool.QueryRow(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE job_id = $1 RETURNING expires_at`, old.ID).Scan(&expired); err != nil {
		t.Fatal(err)
	}
	taker, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "reused", `{"n":2}`))
	if err != nil || !created {
		t.Fatalf("claim of the expired key: created=%v err=%v; want a new job", created, err)
	}
	check := func(where string, j *store.Job) {
		t.Helper()
		if j.State != store.JobCancelled || j.KeyExpiresAt == nil || !j.KeyExpiresAt.Equal(expired) {
			t.Fatalf("%s: the old job, whose key job %s took over: state %s, key_expires_at %v; want cancelled, %v (when its key expired)",
				where, taker.ID, j.State, j.KeyExpiresAt, expired)
		}
	}
	got, err := b.st.GetJob(ctx, "acme", old.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("GetJob", got)

	page, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var listed *store.Job
	for _, j := range page {
		switch j.ID {
		case old.ID:
			listed = j
		case taker.ID:
			if j.KeyExpiresAt != nil {
				t.Fatalf("ListJobs: the new job %s (%s) has key_expires_at %v; want null (not terminal)", j.ID, j.State, j.KeyExpiresAt)
			}
		}
	}
	if listed == nil {
		t.Fatalf("ListJobs: the old job %s is not listed", old.ID)
	}
	check("ListJobs", listed)

	var eventID string
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1 AND type = 'job.cancelled'`,
		old.ID).Scan(&eventID); err != nil {
		t.Fatalf("the cancellation's event: %v", err)
	}
	_, _, evJob, err := b.st.EventForDelivery(ctx, eventID)
	if err != nil {
		t.Fatal(err)
	}
	if evJob == nil {
		t.Fatalf("EventForDelivery(%s): no job, want the cancelled job", eventID)
	}
	check("EventForDelivery", evJob)
}
