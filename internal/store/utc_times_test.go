package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// utcTimes fails the test for any time of j (its attempts' too) that is not
// in UTC. pgx reads timestamptz in time.Local unless the pool says otherwise
// (store.ConfigurePool): a time.Local of "UTC" (TZ unset) is still not
// time.UTC, so this tells the two apart whatever the zone the test runs in —
// and a replica with TZ=Asia/Kolkata wrote the same job's created_at as
// "…+05:30" where a UTC replica wrote "…Z".
func utcTimes(t *testing.T, where string, j *store.Job) {
	t.Helper()
	times := map[string]*time.Time{"created_at": &j.CreatedAt, "updated_at": &j.UpdatedAt,
		"finished_at": j.FinishedAt, "key_expires_at": j.KeyExpiresAt}
	for _, a := range j.Attempts {
		times[fmt.Sprintf("attempts[%d].created_at", a.Seq)] = &a.CreatedAt
		times[fmt.Sprintf("attempts[%d].started_at", a.Seq)] = a.StartedAt
		times[fmt.Sprintf("attempts[%d].finished_at", a.Seq)] = a.FinishedAt
	}
	for _, e := range j.RaceEvents {
		times[fmt.Sprintf("race_events[%d].created_at", e.ID)] = &e.CreatedAt
	}
	for name, tm := range times {
		if tm != nil && tm.Location() != time.UTC {
			t.Errorf("%s: job %s %s = %s is in %q, want UTC (the process's time zone must not show in a job)",
				where, j.ID, name, tm.Format(time.RFC3339Nano), tm.Location())
		}
	}
}

// Every time the store reads is in UTC: a job as created, read, listed and
// announced to a webhook (as it is and as its event recorded it), and the
// event itself.
func TestJobTimesAreUTC(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "tz", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	utcTimes(t, "CreateJob", j)
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if state, err := b.st.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s %v; want failed", state, err)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.FinishedAt == nil || got.KeyExpiresAt == nil || len(got.Attempts) != 1 {
		t.Fatalf("failed job: finished_at %v, key_expires_at %v, %d attempts; want both times and one attempt",
			got.FinishedAt, got.KeyExpiresAt, len(got.Attempts))
	}
	utcTimes(t, "GetJob", got)
	page, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range page {
		utcTimes(t, "ListJobs", l)
	}

	var eventID string
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1 AND type = 'job.failed'`,
		j.ID).Scan(&eventID); err != nil {
		t.Fatalf("the failure's event: %v", err)
	}
	ev, _, evJob, err := b.st.EventForDelivery(ctx, eventID)
	if err != nil || evJob == nil {
		t.Fatalf("EventForDelivery(%s): job %v, err %v; want the failed job", eventID, evJob, err)
	}
	if ev.CreatedAt.Location() != time.UTC {
		t.Errorf("event %s created_at %s is in %q, want UTC", ev.ID, ev.CreatedAt.Format(time.RFC3339Nano), ev.CreatedAt.Location())
	}
	utcTimes(t, "EventForDelivery", evJob)
	// Retried, the job moves on: the event's body is built from its
	// snapshot (jsonb read back into the table's row type).
	if err := b.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	_, _, recorded, err := b.st.EventForDelivery(ctx, eventID)
	if err != nil || recorded == nil || recorded.State != store.JobFailed {
		t.Fatalf("EventForDelivery(%s) after a retry: job %v, err %v; want the job as it failed", eventID, recorded, err)
	}
	utcTimes(t, "EventForDelivery, as recorded", recorded)
}
