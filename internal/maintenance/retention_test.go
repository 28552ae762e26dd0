package maintenance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

type rig struct {
	db *testdb.DB
	st *store.Store
}

func (g rig) job(t *testing.T, key string) *store.Job {
	t.Helper()
	input := json.RawMessage(`{"k":"` + key + `"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, created, err := g.st.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: key,
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil || !created {
		t.Fatalf("create job: created=%v err=%v", created, err)
	}
	return j
}

// succeeded makes a job that succeeded with an attempt, a race event, and a
// completion event with a delivery try.
func (g rig) succeeded(t *testing.T, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j := g.job(t, key)
	a, err := g.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary, LeaseOwner: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_ = g.st.MarkAttemptRunning(ctx, a.ID)
	if won, err := g.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}); err != nil || !won {
		t.Fatalf("complete: %v %v", won, err)
	}
	g.exec(t, `INSERT INTO race_events (job_id, attempt_id, kind) VALUES ($1, $2, 'test')`, j.ID, a.ID)
	var ev string
	if err := g.db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1`, j.ID).Scan(&ev); err != nil {
		t.Fatalf("the outbox wrote no event: %v", err)
	}
	if _, err := g.st.RecordDelivery(ctx, store.DeliveryTry{EventID: ev, Try: 1, URL: "http://x", StartedAt: time.Now(), StatusCode: 200, Status: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	return j
}

func (g rig) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := g.db.Pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// age moves a job's key expiry and last change back by d (the database clock
// cannot be advanced, so the rows are).
func (g rig) age(t *testing.T, jobID string, d time.Duration) {
	t.Helper()
	g.exec(t, `UPDATE idempotency_keys SET expires_at = now() - $2::interval WHERE job_id = $1`, jobID, d)
	g.exec(t, `UPDATE jobs SET updated_at = now() - $2::interval, created_at = now() - $2::interval - interval '1 hour' WHERE id = $1`, jobID, d)
}

func (g rig) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := g.db.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCleanerDeletesOnlyWhatRetentionAllows(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	ctx := context.Background()
	if err := g.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
		t.Fatal(err)
	}
	const retention = 720 * time.Hour
	expired := []*store.Job{g.succeeded(t, "old-1"), g.succeeded(t, "old-2"), g.succeeded(t, "old-3")}
	for _, j := range expired {
		g.age(t, j.ID, retention+time.Hour)
	}
	young := g.succeeded(t, "young")
	g.age(t, young.ID, retention-time.Hour)
	live := g.job(t, "live") // pending: its key never expires, however old
	g.exec(t, `UPDATE jobs SET created_at = now() - interval '2000 hours', updated_at = now() - interval '2000 hours' WHERE id = $1`, live.ID)
	// A key taken over by a new job: the old job's expiry is remembered.
	reused := g.succeeded(t, "reused")
	g.age(t, reused.ID, retention+time.Hour)
	g.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, reused.ID)
	successor := g.job(t, "reused")
	g.exec(t, `UPDATE released_keys SET expired_at = now() - $2::interval WHERE job_id = $1`, reused.ID, retention+time.Hour)

	c := &maintenance.Cleaner{Store: g.st, After: retention, Batch: 2}
	n, err := c.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("deleted %d jobs, want 4 (three expired, one released)", n)
	}
	for _, j := range append(expired, reused) {
		for _, q := range []string{
			`SELECT count(*) FROM jobs WHERE id = $1`, `SELECT count(*) FROM attempts WHERE job_id = $1`,
			`SELECT count(*) FROM race_events WHERE job_id = $1`, `SELECT count(*) FROM job_events WHERE job_id = $1`,
			`SELECT count(*) FROM released_keys WHERE job_id = $1`,
			`SELECT count(*) FROM webhook_deliveries d JOIN job_events e ON e.id = d.event_id WHERE e.job_id = $1`,
		} {
			if c := g.count(t, q, j.ID); c != 0 {
				t.Fatalf("%s for deleted job: %d rows left", q, c)
			}
		}
	}
	if c := g.count(t, `SELECT count(*) FROM webhook_deliveries`); c != 1 {
		t.Fatalf("%d deliveries left, want the young job's one", c)
	}
	for _, j := range []*store.Job{young, live, successor} {
		if _, err := g.st.GetJobAny(ctx, j.ID); err != nil {
			t.Fatalf("job %s (key %s) was deleted: %v", j.ID, j.IdempotencyKey, err)
		}
	}
	if k := g.count(t, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key IN ('young', 'live', 'reused')`); k != 3 {
		t.Fatalf("%d live key rows, want 3", k)
	}
	if n, _ := c.Once(ctx); n != 0 {
		t.Fatalf("a second pass deleted %d more", n)
	}
}

// A follower deletes nothing.
func TestCleanerRunsOnlyOnTheLeader(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	if err := g.st.SyncConfigWebhooks(context.Background(), map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
		t.Fatal(err)
	}
	j := g.succeeded(t, "old")
	g.age(t, j.ID, 800*time.Hour)
	c := &maintenance.Cleaner{Store: g.st, After: 720 * time.Hour, Leader: notLeader{}}
	if n, err := c.Once(context.Background()); n != 0 || err != nil {
		t.Fatalf("follower deleted %d (err %v)", n, err)
	}
}

type notLeader struct{}

func (notLeader) IsLeader() bool { return false }
