package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// ownerBusyCase is an event whose last retry is looked at while its owner is
// at webhooks.max_inflight_per_owner on the replica (another of its
// deliveries has been in flight for 20 s on a slow endpoint), with the
// default webhook settings and a short retention.jobs (1h, so that
// retention's check for pending events younger than the redelivery window
// applies).
type ownerBusyCase struct {
	db       *testdb.DB
	w        *Worker
	id       string
	due      time.Duration // the latest a retry can come due: retry_for + backoff_cap + its spread + the failed try (config.DeliveryTryMax)
	requests atomic.Int64
	outcomes outcomes
}

func newOwnerBusyCase(t *testing.T) *ownerBusyCase {
	t.Helper()
	ctx := context.Background()
	wc := config.Webhooks{Timeout: config.Duration(10 * time.Second), RetryFor: config.Duration(24 * time.Hour),
		BackoffCap: config.Duration(time.Hour)}
	c := &ownerBusyCase{due: wc.RetryFor.D() + wc.BackoffCap.D() + spreadMax(wc.BackoffCap.D()) + config.DeliveryTryMax(wc.Timeout.D())}
	c.db = testdb.New(t, store.Options{RedeliveryWindow: wc.RedeliveryWindow()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c.requests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	if err := c.db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	c.id = cancelledJobEvent(t, c.db, "acme", "k1")
	c.w = NewWorker(c.db.Store, Config{Timeout: wc.Timeout.D(), RetryFor: wc.RetryFor.D(), Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	c.w.setBackoff(Backoff{Base: 5 * time.Second, Cap: wc.BackoffCap.D()})
	c.w.observer = &c.outcomes
	c.w.owners.limit = 1 // webhooks.max_inflight_per_owner: 1
	if ok, _ := c.w.owners.acquire("acme", time.Now().Add(-20*time.Second)); !ok {
		t.Fatal("the other delivery got no slot")
	}
	return c
}

func (c *ownerBusyCase) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := c.db.Pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// job is the event's River job, with its creation time: the event's (the
// outbox inserts both in one statement), from which the worker tells the
// event's age without reading it.
func (c *ownerBusyCase) job(t *testing.T) *river.Job[DeliverArgs] {
	t.Helper()
	row := &rivertype.JobRow{ID: 1, Attempt: 20, MaxAttempts: 10000}
	if err := c.db.Pool.QueryRow(context.Background(), `SELECT created_at FROM job_events WHERE id = $1`, c.id).Scan(&row.CreatedAt); err != nil {
		t.Fatal(err)
	}
	return &river.Job[DeliverArgs]{JobRow: row, Args: DeliverArgs{EventID: c.id, Owner: "acme"}}
}

// look works the event's delivery with the event age old, and wants it
// snoozed.
func (c *ownerBusyCase) lookSnoozed(t *testing.T, age time.Duration) time.Duration {
	t.Helper()
	c.exec(t, `UPDATE job_events SET created_at = now() - $2::interval WHERE id = $1`, c.id, age)
	err := c.w.Work(context.Background(), c.job(t))
	var snoozed *river.JobSnoozeError
	if !errors.As(err, &snoozed) {
		t.Fatalf("the retry with its owner at its limit, its event %s old: %v, want a snooze", age, err)
	}
	return snoozed.Duration
}

// snoozePassesAndRetentionRuns ages the event by the snooze (on the
// database's clock) and a second for River to fetch it again, lets its key
// expire long ago, and runs retention (retention.jobs: 1h), which must keep
// the job.
func (c *ownerBusyCase) snoozePassesAndRetentionRuns(t *testing.T, snoozed time.Duration, what string) {
	t.Helper()
	c.exec(t, `UPDATE job_events SET created_at = created_at - $2::interval WHERE id = $1`, c.id, snoozed+time.Second)
	c.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '2 hours' WHERE job_id = (SELECT job_id FROM job_events WHERE id = $1)`, c.id)
	c.exec(t, `UPDATE jobs SET updated_at = now() - interval '2 hours' WHERE id = (SELECT job_id FROM job_events WHERE id = $1)`, c.id)
	deleted, err := c.db.Store.DeleteExpiredJobs(context.Background(), time.Hour, 100)
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 0 {
		t.Fatalf("retention (retention.jobs: 1h) deleted the job of a pending event %s and was snoozed %s for its owner's turn: "+
			"the snoozed retry finds nothing, the event is neither delivered nor abandoned", what, snoozed.Round(time.Millisecond))
	}
}

func (c *ownerBusyCase) status(t *testing.T) string {
	t.Helper()
	var status string
	if err := c.db.Pool.QueryRow(context.Background(), `SELECT status FROM job_events WHERE id = $1`, c.id).Scan(&status); err != nil {
		t.Fatal(err)
	}
	return status
}

// The redelivery window was exactly the latest a retry can come *due*: the
// failed try before it read its event just under retry_for old and lasted up
// to timeout, then waited up to backoff_cap and the spread. It left nothing
// for what a retry that comes due may still wait before it reads its event:
// here its owner is at webhooks.max_inflight_per_owner, so the retry is
// snoozed to its turn (20–40 s). With a short retention.jobs, retention
// deleted the job meanwhile: the snoozed retry found nothing and ended, the
// event neither delivered nor abandoned, counted and logged nowhere (found by
// review, rwh13). Now the window allows for it (config.RedeliveryMargin), and
// the retry delivers the event once its owner has a free slot.
func TestOwnerBusySnoozeOfALastRetryKeepsItsJob(t *testing.T) {
	c := newOwnerBusyCase(t)
	// The event's last retry comes due a second before the latest it can.
	snoozed := c.lookSnoozed(t, c.due-time.Second)
	// The other delivery ends; the snooze passes.
	c.w.owners.release("acme", time.Now())
	c.snoozePassesAndRetentionRuns(t, snoozed, "whose retry came due within its time")
	if err := c.w.Work(context.Background(), c.job(t)); err != nil {
		t.Fatalf("the snoozed retry: %v, want delivered", err)
	}
	if status := c.status(t); status != store.EventDelivered || c.requests.Load() != 1 {
		t.Fatalf("the event after the snoozed retry: %q, %d requests; want delivered", status, c.requests.Load())
	}
}

// A retry that comes due in time and keeps finding its owner at its limit
// (or a delivery of a backlog whose turn is parked far ahead) is not snoozed
// past the event's last look (the latest a retry comes due plus a minute):
// its snooze ends then, and, its owner still busy, the event is abandoned,
// nothing sent — recorded, counted abandoned and logged — before the
// redelivery window ends, rather than deleted by retention while it waited
// (found by review, rwh13: every event ends delivered or abandoned).
func TestOwnerBusyDeliveryPastItsLastLookIsAbandonedNotLost(t *testing.T) {
	c := newOwnerBusyCase(t)
	// The event's retry has waited for its owner's turn for all but a second
	// of the minute after the latest a retry comes due.
	snoozed := c.lookSnoozed(t, c.due+2*ownerBusyMax-time.Second)
	c.snoozePassesAndRetentionRuns(t, snoozed, "whose retry came due within its time")
	// Its owner is still at its limit.
	err := c.w.Work(context.Background(), c.job(t))
	var cancelled *river.JobCancelError
	if !errors.As(err, &cancelled) {
		t.Fatalf("the retry past its last look, its owner still at its limit: %v, want the event abandoned (river.JobCancel)", err)
	}
	if status := c.status(t); status != store.EventAbandoned || c.requests.Load() != 0 {
		t.Fatalf("the event: %q, %d requests; want abandoned, nothing sent", status, c.requests.Load())
	}
	c.outcomes.mu.Lock()
	defer c.outcomes.mu.Unlock()
	if len(c.outcomes.got) != 1 || c.outcomes.got[0] != OutcomeAbandoned {
		t.Fatalf("outcomes counted: %v, want [abandoned]", c.outcomes.got)
	}
}

// An owner's backlog behind an endpoint that does not keep up is parked: its
// turns run far ahead, here two hours, and a delivery's snooze to its turn
// has no bound. The snooze of a delivery whose retry comes due at the latest
// it can ends no later than a minute after (the event's last look), inside
// the redelivery window: its owner still at its limit then, the event is
// abandoned, nothing sent, where the snooze to its turn outlasted the window
// and retention deleted its job first (found by review, rwh13).
func TestParkedTurnOfALastRetryEndsAtItsLastLook(t *testing.T) {
	c := newOwnerBusyCase(t)
	c.w.owners.mu.Lock()
	c.w.owners.paceOf("acme").next = time.Now().Add(2 * time.Hour)
	c.w.owners.mu.Unlock()
	snoozed := c.lookSnoozed(t, c.due)
	if snoozed > ownerBusyGrace+c.w.hints.offset() {
		t.Fatalf("the delivery of an event whose last retry came due at the latest it can was snoozed %s for its owner's parked turn, "+
			"past its last look %s later: retention may delete its job meanwhile", snoozed, ownerBusyGrace)
	}
	c.snoozePassesAndRetentionRuns(t, snoozed, "whose retry came due within its time")
	err := c.w.Work(context.Background(), c.job(t))
	var cancelled *river.JobCancelError
	if !errors.As(err, &cancelled) || c.status(t) != store.EventAbandoned {
		t.Fatalf("the delivery at its last look, its owner still at its limit: %v, event %q; want it abandoned", err, c.status(t))
	}
}

// config.RedeliveryMargin is what a delivery that came due may still wait
// before its event is read: its owner's turn up to its last look
// (ownerBusyGrace, then it is abandoned), or River's rescue of a try its
// replica's death cut then (rescueStuckAfter, the rescuer's 30 s round, and
// the rescued delivery's wait), and a minute for River's scheduler and fetch.
func TestRedeliveryMarginCoversTheLastLookAndARescue(t *testing.T) {
	if got, want := config.RedeliveryMargin, ownerBusyGrace+rescueStuckAfter+time.Minute; got != want {
		t.Errorf("config.RedeliveryMargin is %s, want %s (ownerBusyGrace + rescueStuckAfter + a minute)", got, want)
	}
	if rescueWaitMax+30*time.Second > time.Minute {
		t.Errorf("the rescuer's round and a rescued delivery's wait (%s) take the minute the margin allows", rescueWaitMax+30*time.Second)
	}
}
