package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/routerhq/router/internal/store"
)

// listenRiver listens, on a connection of its own, to River's insert
// notification in the test's schema, as River's producers do.
func listenRiver(t *testing.T, b *bundle) (conn *pgx.Conn, channel string) {
	t.Helper()
	ctx := context.Background()
	c, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn = c.Hijack()
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if err := conn.QueryRow(ctx, `SELECT current_schema() || '.river_insert'`).Scan(&channel); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return conn, channel
}

func nextNotification(t *testing.T, conn *pgx.Conn) *pgconn.Notification {
	t.Helper()
	n, err := conn.WaitForNotification(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// acmeHasWebhook gives the owner "acme" a webhook (nothing listens there).
func acmeHasWebhook(t *testing.T, b *bundle) {
	t.Helper()
	if err := b.st.SyncConfigWebhooks(context.Background(), map[string]string{"acme": "http://127.0.0.1:9/hook"}); err != nil {
		t.Fatal(err)
	}
}

// runningJob creates a job with its first attempt running and returns it with
// the completion that would win it.
func runningJob(t *testing.T, st *store.Store, owner, key string) (*store.Job, store.Completion) {
	t.Helper()
	nj := newJob(t, owner, "triage", key, `{"k":"`+key+`"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := st.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	a := j.Attempts[0]
	return j, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}
}

func winFresh(t *testing.T, st *store.Store, owner, key string) *store.Job {
	t.Helper()
	j, c := runningJob(t, st, owner, key)
	won, err := st.Complete(context.Background(), c)
	if err != nil || !won {
		t.Fatalf("complete: won=%v err=%v", won, err)
	}
	return j
}

// Issue 11: the batched win of a job whose owner has a webhook writes the
// outbox event in its transaction but does not notify River there (a
// notifying transaction holds a database-wide lock through its commit, so
// batches would commit one at a time); the store wakes River once the batch
// has committed. A win of an owner without a webhook wakes nobody.
func TestBatchedWinWakesRiverAfterItsCommit(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	conn, channel := listenRiver(t, b)
	waiting, release := make(chan struct{}, 1), make(chan struct{})
	b.st.SetBeforeRiverWake(func() {
		waiting <- struct{}{}
		<-release
	})

	winFresh(t, b.st, "quiet", "q1") // no webhook: no event, no wake
	if n := b.st.RiverWakesAsked(); n != 0 {
		t.Fatalf("a win of an owner without a webhook asked for %d River wakes", n)
	}
	j := winFresh(t, b.st, "acme", "k1")
	if n := b.st.RiverWakesAsked(); n != 1 {
		t.Fatalf("the win asked for %d River wakes, want 1", n)
	}
	<-waiting // the wake is about to be sent; the win has committed
	if _, err := b.db.Pool.Exec(ctx, `SELECT pg_notify($1, 'sentinel')`, channel); err != nil {
		t.Fatal(err)
	}
	// Notifications arrive in commit order: a notification from the win's own
	// transaction would come before the sentinel.
	if n := nextNotification(t, conn); n.Payload != "sentinel" {
		t.Fatalf("first notification %q: the win's own transaction notified River", n.Payload)
	}
	close(release)
	if n := nextNotification(t, conn); n.Payload != `{"queue": "webhooks"}` {
		t.Fatalf("after the commit River got %q, want its insert notification for the webhooks queue", n.Payload)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = $1 AND type = 'job.succeeded'`, j.ID); n != 1 {
		t.Fatalf("%d job.succeeded events for the win, want 1", n)
	}
	if n := count(t, b, `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'`); n != 1 {
		t.Fatalf("%d delivery jobs, want 1 (the quiet owner has no webhook)", n)
	}
}

// Outside the batched statements (here a cancellation) the outbox trigger
// still notifies River in the transition's own transaction.
func TestOtherTransitionsNotifyRiverInTheirTransaction(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	conn, channel := listenRiver(t, b)
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "c1", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `SELECT pg_notify($1, 'sentinel')`, channel); err != nil {
		t.Fatal(err)
	}
	if n := nextNotification(t, conn); n.Payload != `{"queue": "webhooks"}` {
		t.Fatalf("first notification %q, want the cancellation's own", n.Payload)
	}
	if n := b.st.RiverWakesAsked(); n != 0 {
		t.Fatalf("a cancellation asked the store for %d River wakes", n)
	}
}

// Issue 11: the batched win writes the outbox rows of its jobs itself
// (migration 0015) and the trigger skips them: exactly one event per won job
// of an owner with a webhook — none missing, none written twice — with the
// River job the trigger writes for every other transition (a cancellation
// here), column for column; nothing for an owner without a webhook.
func TestBatchedWinWritesOneEventPerJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	won := winFresh(t, b.st, "acme", "w1")
	winFresh(t, b.st, "quiet", "q1")
	cancelled, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "c1", `{"k":"c1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	after, err := b.st.GetJobAny(ctx, won.ID)
	if err != nil {
		t.Fatal(err)
	}
	type outbox struct {
		events                           int
		typ                              string
		version                          int64
		kind, queue, args, meta, tags    string
		maxAttempts, priority, riverJobs int
	}
	read := func(jobID string) outbox {
		t.Helper()
		var o outbox
		if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1`, jobID).Scan(&o.events); err != nil {
			t.Fatal(err)
		}
		if o.events != 1 {
			return o
		}
		err := b.db.Pool.QueryRow(ctx, `SELECT e.type, e.job_version, count(r.id), min(r.kind), min(r.queue),
				min(r.args::text), min(r.metadata::text), min(array_to_string(r.tags, ',')), min(r.max_attempts), min(r.priority)
			FROM job_events e LEFT JOIN river_job r ON r.args->>'event_id' = e.id::text
			WHERE e.job_id = $1 GROUP BY e.id`, jobID).
			Scan(&o.typ, &o.version, &o.riverJobs, &o.kind, &o.queue, &o.args, &o.meta, &o.tags, &o.maxAttempts, &o.priority)
		if err != nil {
			t.Fatal(err)
		}
		o.args = "" // holds the event's own id
		return o
	}
	w, c := read(won.ID), read(cancelled.ID)
	if w.events != 1 || w.typ != "job.succeeded" || w.version != after.Version || w.riverJobs != 1 {
		t.Fatalf("won job's outbox: %+v, want one job.succeeded event of version %d with one River job", w, after.Version)
	}
	if c.events != 1 || c.typ != "job.cancelled" || c.riverJobs != 1 {
		t.Fatalf("cancelled job's outbox (the trigger's): %+v", c)
	}
	w.typ, w.version, c.typ, c.version = "", 0, "", 0
	if w != c {
		t.Errorf("River job of the batched win %+v differs from the trigger's %+v", w, c)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE owner = 'quiet'`); n != 0 {
		t.Errorf("owner without a webhook: %d events, want none", n)
	}
}

// Issue 11: one batch of the success path (a claim and three wins of two
// owners, one transaction) writes one event and one River job per won job of
// the owner with a webhook and nothing for the other; a cancellation on the
// same pool right after still goes through the trigger (the batch's setting
// ends with its transaction).
func TestBatchOfWinsWritesEachOwnersEvents(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	var cs []store.Completion
	var ids []string
	for _, k := range []struct{ owner, key string }{{"acme", "b1"}, {"quiet", "b2"}, {"acme", "b3"}} {
		j, c := runningJob(t, b.st, k.owner, k.key)
		cs, ids = append(cs, c), append(ids, j.ID)
	}
	created, claimErrs, won, winErrs := b.st.PathBatch(ctx, []store.NewJob{newJob(t, "acme", "triage", "b4", `{"k":"b4"}`)}, cs)
	if !created[0] || claimErrs[0] != nil {
		t.Fatalf("claim in the batch: created=%v err=%v", created[0], claimErrs[0])
	}
	for i := range cs {
		if !won[i] || winErrs[i] != nil {
			t.Fatalf("win %d: won=%v err=%v", i, won[i], winErrs[i])
		}
	}
	for i, want := range []int{1, 0, 1} {
		n := count(t, b, `SELECT count(*) FROM job_events e JOIN river_job r ON r.args->>'event_id' = e.id::text
			WHERE e.job_id = $1 AND e.type = 'job.succeeded'`, ids[i])
		if all := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = $1`, ids[i]); n != want || all != want {
			t.Errorf("job %d: %d events with a River job (%d events in all), want %d", i, n, all, want)
		}
	}
	j, err := b.st.GetJobAny(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	pending, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "b5", `{"k":"b5"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", pending.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = $1 AND type = 'job.cancelled'`, pending.ID); n != 1 {
		t.Errorf("cancellation after the batch: %d events, want 1 (written by the trigger)", n)
	}
	if v := count(t, b, `SELECT job_version FROM job_events WHERE job_id = $1`, ids[0]); int64(v) != j.Version {
		t.Errorf("event of job 0 has version %d, want the won job's %d", v, j.Version)
	}
}
