package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// retention is retention.jobs in these tests: short, as an operator may set
// it, far shorter than the webhook redelivery window.
const retention = time.Hour

// finished makes a job of acme (an owner with a webhook) that succeeded, so
// the outbox wrote its job.succeeded event (pending: no worker runs here), and
// returns the job and the event's id.
func (b *bundle) finished(t *testing.T, key string) (*store.Job, string) {
	t.Helper()
	ctx := context.Background()
	j := b.succeeded(t, "acme", key)
	var ev, status string
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text, status FROM job_events WHERE job_id = $1`, j.ID).Scan(&ev, &status); err != nil {
		t.Fatalf("the outbox wrote no event: %v", err)
	}
	if status != store.EventPending {
		t.Fatalf("a new event is %s, want pending", status)
	}
	return j, ev
}

// expire moves a job's key expiry and last change back past retention (the
// database clock cannot be advanced, so the rows are). Its event keeps its own
// age: it was written when the job finished, as if the key had been short.
func (b *bundle) expire(t *testing.T, jobID string) {
	t.Helper()
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - $2::interval WHERE job_id = $1`, jobID, retention+time.Minute)
	b.exec(t, `UPDATE jobs SET updated_at = now() - $2::interval WHERE id = $1`, jobID, retention+time.Minute)
}

// ageEvent makes an event d old.
func (b *bundle) ageEvent(t *testing.T, eventID string, d time.Duration) {
	t.Helper()
	b.exec(t, `UPDATE job_events SET created_at = now() - $2::interval WHERE id = $1`, eventID, d)
}

func (b *bundle) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func (b *bundle) record(t *testing.T, eventID, status string) {
	t.Helper()
	code := 200
	if status != store.EventDelivered {
		code = 500
	}
	if _, err := b.st.RecordDelivery(context.Background(), store.DeliveryTry{EventID: eventID, Try: 1, URL: "https://acme.example/hook",
		StartedAt: time.Now(), StatusCode: code, Status: status}); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) exists(t *testing.T, jobID string) bool {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE id = $1`, jobID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func (b *bundle) withWebhook(t *testing.T) {
	t.Helper()
	if err := b.st.SyncConfigWebhooks(context.Background(), map[string]string{"acme": "https://acme.example/hook"}); err != nil {
		t.Fatal(err)
	}
}

// A job whose event is not delivered yet outlives its retention until the
// event is delivered: deleting it would lose the event (the worker finds
// nothing and stops), breaking at-least-once delivery.
func TestRetentionKeepsAJobUntilItsEventIsDelivered(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	j, ev := b.finished(t, "k1")
	b.expire(t, j.ID)

	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 0 {
		t.Fatalf("with its event pending: deleted %d jobs (err %v), want 0", n, err)
	}
	b.record(t, ev, store.EventPending) // a failed try: being retried
	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 0 {
		t.Fatalf("with its event being retried: deleted %d jobs (err %v), want 0", n, err)
	}
	if !b.exists(t, j.ID) {
		t.Fatal("the job was deleted")
	}
	if _, _, _, err := b.st.EventForDelivery(ctx, ev); err != nil {
		t.Fatalf("the worker cannot read the pending event any more: %v", err)
	}

	b.record(t, ev, store.EventDelivered)
	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 1 {
		t.Fatalf("once delivered: deleted %d jobs (err %v), want 1", n, err)
	}
	if b.exists(t, j.ID) {
		t.Fatal("the delivered job is still there")
	}
}

// An abandoned event, or one pending longer than the redelivery window (its
// River job lost: nothing will try it again), holds nothing back.
func TestRetentionDeletesJobsWhoseEventsEnded(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	abandoned, ev1 := b.finished(t, "abandoned")
	b.record(t, ev1, store.EventAbandoned)
	stale, ev2 := b.finished(t, "stale")
	b.ageEvent(t, ev2, store.DefaultRedeliveryWindow+time.Minute)
	for _, j := range []*store.Job{abandoned, stale} {
		b.expire(t, j.ID)
	}
	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 2 {
		t.Fatalf("deleted %d jobs (err %v), want 2", n, err)
	}
	var left int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE id = ANY($1::uuid[])`, []string{ev1, ev2}).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d events left (err %v), want 0", left, err)
	}
}

// The window is the configuration's: with webhooks.retry_for longer than the
// default, a job whose event is older than the default window but still being
// retried is kept.
func TestRetentionUsesTheConfiguredRedeliveryWindow(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	j, ev := b.finished(t, "k1")
	b.ageEvent(t, ev, 30*time.Hour)
	b.expire(t, j.ID)
	long := store.New(b.db.Pool, store.Options{KeyRetention: time.Hour, RedeliveryWindow: 49 * time.Hour})
	if n, err := long.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 0 {
		t.Fatalf("a 30h-old pending event with a 49h window: deleted %d jobs (err %v), want 0", n, err)
	}
	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 10); err != nil || n != 1 {
		t.Fatalf("the same with the default window (%s): deleted %d jobs (err %v), want 1", store.DefaultRedeliveryWindow, n, err)
	}
}

// Kept jobs do not take a batch's places: behind the oldest expired keys, whose
// events are pending, the cleaner still reaches the jobs it may delete, both by
// a key's expiry and by a released key's.
func TestRetentionReachesDeletableJobsBehindKeptOnes(t *testing.T) {
	b := setup(t)
	b.withWebhook(t)
	ctx := context.Background()
	var kept []*store.Job
	for _, key := range []string{"p1", "p2", "p3"} {
		j, _ := b.finished(t, key)
		b.expire(t, j.ID)
		b.exec(t, `UPDATE idempotency_keys SET expires_at = expires_at - interval '1 hour' WHERE job_id = $1`, j.ID) // the oldest
		kept = append(kept, j)
	}
	// A job whose key was taken over by a newer job: only released_keys
	// remembers when its key expired. Its event is pending too.
	released, _ := b.finished(t, "reused")
	b.expire(t, released.ID)
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, released.ID)
	if _, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "op", "reused", `{"k":"again"}`)); err != nil || !created {
		t.Fatalf("reuse the key: created=%v err=%v", created, err)
	}
	b.exec(t, `UPDATE released_keys SET expired_at = now() - $2::interval WHERE job_id = $1`, released.ID, retention+2*time.Hour)
	kept = append(kept, released)

	done, ev := b.finished(t, "done")
	b.record(t, ev, store.EventDelivered)
	b.expire(t, done.ID)

	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 1); err != nil || n != 1 {
		t.Fatalf("batch of 1: deleted %d jobs (err %v), want the delivered one", n, err)
	}
	if b.exists(t, done.ID) {
		t.Fatal("the delivered job is still there")
	}
	for _, j := range kept {
		if !b.exists(t, j.ID) {
			t.Fatalf("job %s (key %s), whose event is pending, was deleted", j.ID, j.IdempotencyKey)
		}
	}
}
