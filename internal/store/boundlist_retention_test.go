package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Retention keeps a job while one of its events is pending and younger than
// the redelivery window. An event is written with its job's state change, so
// it is as old as the job's last change, and a job the cleaner may delete
// changed at least retention.jobs ago: with retention.jobs past the window,
// as by default (720h, ~25h), no candidate can have such an event, and the
// check is not made. It was not free: during a webhook outage, with thousands
// of events pending, the planner made it a scan of every pending event per
// candidate (0.4-1.2 s a batch of 100). With a shorter retention (or one
// within an hour of the window: transactions stamp now() when they start)
// the check stays.
func TestRetentionPastTheRedeliveryWindowReadsNoEvents(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.withWebhook(t)
	pool, plans := explainingPool(t, b)
	st := store.New(pool, store.Options{KeyRetention: time.Hour})
	const candidates = "FOR UPDATE OF j SKIP LOCKED"
	for _, tc := range []struct {
		name   string
		after  time.Duration
		checks bool
	}{
		{"short retention", time.Hour, true},
		{"retention as long as the window", store.DefaultRedeliveryWindow, true},
		{"default retention", 720 * time.Hour, false},
	} {
		ids := endedJobs(t, b, tc.name)
		// Time passes: every row of the jobs moves back by the same
		// amount (the database clock cannot be advanced), to a minute
		// past the keys' expiry (KeyRetention after the end) plus after.
		ago := time.Hour + tc.after + time.Minute
		b.exec(t, `UPDATE jobs SET created_at = created_at - $2::interval, updated_at = updated_at - $2::interval,
			finished_at = finished_at - $2::interval WHERE id = ANY($1::uuid[])`, ids, ago)
		b.exec(t, `UPDATE idempotency_keys SET expires_at = expires_at - $2::interval WHERE job_id = ANY($1::uuid[])`, ids, ago)
		b.exec(t, `UPDATE job_events SET created_at = created_at - $2::interval WHERE job_id = ANY($1::uuid[])`, ids, ago)

		plans("") // only this pass's
		n, err := st.DeleteExpiredJobs(ctx, tc.after, 10)
		if err != nil {
			t.Fatal(err)
		}
		ps := plans(candidates)
		if len(ps) != 1 {
			t.Fatalf("%s: %d plans of the candidates' statement reported, want 1", tc.name, len(ps))
		}
		if got := ps[0].Plan.scans("job_events"); got != tc.checks {
			t.Errorf("%s (%s, window %s): the candidates' statement reads job_events: %v, want %v\n%s",
				tc.name, tc.after, store.DefaultRedeliveryWindow, got, tc.checks, ps[0].JSON)
		}
		// Past the window every event ended its retries: all go. Within
		// it they are pending and young: all stay (and are no candidates
		// of the later, longer retentions).
		want := len(ids)
		if tc.after < store.DefaultRedeliveryWindow {
			want = 0
		}
		if n != want {
			t.Errorf("%s: deleted %d jobs, want %d", tc.name, n, want)
		}
	}
}

// endedJobs makes jobs of acme (which has a webhook) ended by each transition
// that writes an event: a win, a batched win, a failure, an unknown job
// resolved, a cancellation; no worker runs, so every event stays pending. It
// checks that none of the events is younger than its job's last change, and
// returns the jobs' ids.
func endedJobs(t *testing.T, b *bundle, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	won := b.succeeded(t, "acme", prefix+" won")
	batched, win := runningJob(t, b.st, "acme", prefix+" batched")
	if _, _, ok, errs := b.st.PathBatch(ctx, nil, []store.Completion{win}); !ok[0] || errs[0] != nil {
		t.Fatalf("batched win: won=%v err=%v", ok[0], errs[0])
	}
	failed, _ := runningJob(t, b.st, "acme", prefix+" failed")
	if err := b.st.FinishAttempt(ctx, failed.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, failed.ID, "failed"); err != nil || s != store.JobFailed {
		t.Fatalf("settle: %s %v", s, err)
	}
	resolved := unknownHedgedJob(t, b.st, prefix+" resolved")
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: resolved.ID, Seq: 1, Outcome: "succeeded",
		Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	cancelled, _ := runningJob(t, b.st, "acme", prefix+" cancelled")
	if err := b.st.CancelJob(ctx, "acme", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	ids := []string{won.ID, batched.ID, failed.ID, resolved.ID, cancelled.ID}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = ANY($1::uuid[]) AND status = 'pending'`, ids); n != 6 {
		t.Fatalf("%d pending events, want 6 (job.unknown and job.succeeded of the resolved job)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id
		WHERE e.job_id = ANY($1::uuid[]) AND e.created_at > j.updated_at`, ids); n != 0 {
		t.Fatalf("%d events younger than their job's last change: the cleaner's reasoning does not hold", n)
	}
	return ids
}
