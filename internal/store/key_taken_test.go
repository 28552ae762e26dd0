package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job whose key expired and was taken over by a newer job reads as such
// (Job.KeyTaken, what next_step's advice rests on: its retry is refused and
// its key reaches the newer job), with the expiry of its key, in every read
// of a job — GetJob, GetJobAny, the listing (plain and windowed), RecentJobs,
// RecentJobsCapped and a webhook body; the newer job, and a terminal job
// that still holds its key, do not.
func TestKeyTakenIsReadWithTheJob(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	old, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "taken", `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	holder, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held", `{"n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", holder.ID); err != nil {
		t.Fatal(err)
	}
	var expired time.Time
	if err := b.db.Pool.QueryRow(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE job_id = $1 RETURNING expires_at`, old.ID).Scan(&expired); err != nil {
		t.Fatal(err)
	}
	taker, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "taken", `{"n":2}`))
	if err != nil || !created {
		t.Fatalf("claim of the expired key: created=%v err=%v; want a new job", created, err)
	}
	check := func(where string, j *store.Job) {
		t.Helper()
		switch j.ID {
		case old.ID:
			if !j.KeyTaken || j.KeyExpiresAt == nil || !j.KeyExpiresAt.Equal(expired) {
				t.Errorf("%s: the old job, whose key job %s took over: key taken %v, key_expires_at %v; want taken, %v",
					where, taker.ID, j.KeyTaken, j.KeyExpiresAt, expired)
			}
		case taker.ID, holder.ID:
			if j.KeyTaken {
				t.Errorf("%s: job %s (%s), which holds its key, reads as having lost it (key_expires_at %v)",
					where, j.ID, j.State, j.KeyExpiresAt)
			}
			if j.ID == holder.ID && j.KeyExpiresAt == nil {
				t.Errorf("%s: the cancelled job %s that holds its key has no key expiry", where, j.ID)
			}
		}
	}
	seen := map[string]int{}
	checkAll := func(where string, jobs []*store.Job) {
		t.Helper()
		for _, j := range jobs {
			check(where, j)
			seen[where+" "+j.ID]++
		}
		if seen[where+" "+old.ID] != 1 {
			t.Errorf("%s: the old job %s was not read", where, old.ID)
		}
	}
	for _, id := range []string{old.ID, taker.ID, holder.ID} {
		got, err := b.st.GetJob(ctx, "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		check("GetJob", got)
		if got, err = b.st.GetJobAny(ctx, id); err != nil {
			t.Fatal(err)
		}
		check("GetJobAny", got)
	}
	page, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkAll("ListJobs", page)
	if page, _, err = b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", State: store.JobCancelled, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	checkAll("ListJobs (windowed, state=cancelled)", page)
	recent, err := b.st.RecentJobs(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkAll("RecentJobs", recent)
	capped, err := b.st.RecentJobsCapped(ctx, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	var cappedJobs []*store.Job
	for _, r := range capped {
		cappedJobs = append(cappedJobs, r.Job)
	}
	checkAll("RecentJobsCapped", cappedJobs)

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
