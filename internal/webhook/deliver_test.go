package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// received is one request the test receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTP webhook endpoint; answer decides each response by
// its 1-based request number (0 or less: hang until the sender gives up).
type receiver struct {
	srv *httptest.Server
	got chan received
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{got: make(chan received, 100)}
	var n atomic.Int64 // deliveries of different events arrive concurrently
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		code := answer(int(n.Add(1)))
		rc.got <- received{header: r.Header.Clone(), body: body}
		if code <= 0 {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case r := <-rc.got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery within 30s")
		return received{}
	}
}

type env struct {
	db  *testdb.DB
	st  *store.Store
	svc *webhook.Service
}

// setup makes a schema where owner acme has a webhook at url, and a (not yet
// started) delivery service with fast retries.
func setup(t *testing.T, url string, timeout time.Duration) *env {
	t.Helper()
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if err := db.Store.SyncConfigWebhooks(context.Background(), map[string]string{"acme": url}); err != nil {
		t.Fatal(err)
	}
	return &env{db: db, st: db.Store, svc: newService(t, db, timeout)}
}

func newService(t *testing.T, db *testdb.DB, timeout time.Duration) *webhook.Service {
	t.Helper()
	return newServiceWith(t, db, webhook.Config{Timeout: timeout, Secrets: map[string]string{"acme": secret}})
}

// newServiceWith is a (not yet started) delivery service with fast retries
// and the worker configuration cfg.
func newServiceWith(t *testing.T, db *testdb.DB, cfg webhook.Config) *webhook.Service {
	t.Helper()
	return newServiceOf(t, db, webhook.ServiceConfig{Config: cfg})
}

// newServiceOf is a (not yet started) delivery service of sc with, unless sc
// sets them, fast retries, a short poll and warnings logged to stderr.
func newServiceOf(t *testing.T, db *testdb.DB, sc webhook.ServiceConfig) *webhook.Service {
	t.Helper()
	if sc.Backoff.Base == 0 && sc.Backoff.Cap == 0 {
		sc.Backoff = webhook.Backoff{Base: 5 * time.Millisecond, Cap: 20 * time.Millisecond}
	}
	if sc.PollInterval == 0 {
		sc.PollInterval = 100 * time.Millisecond
	}
	if sc.Log == nil {
		sc.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	svc, err := webhook.NewService(db.Pool, db.Store, sc)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func (e *env) start(t *testing.T) {
	t.Helper()
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.svc.Stop(ctx)
	})
}

func (e *env) newJob(t *testing.T, owner, key string) *store.Job {
	t.Helper()
	input := json.RawMessage(`{"n":"` + key + `"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := e.st.CreateJob(context.Background(), store.NewJob{Owner: owner, Operation: "op", IdempotencyKey: key,
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (e *env) succeed(t *testing.T, owner, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j := e.newJob(t, owner, key)
	a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary, LeaseOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	won, err := e.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{"ok":true}`)})
	if err != nil || !won {
		t.Fatalf("complete: won=%v err=%v", won, err)
	}
	return j
}

func (e *env) cancel(t *testing.T, owner, key string) *store.Job {
	t.Helper()
	j := e.newJob(t, owner, key)
	if err := e.st.CancelJob(context.Background(), owner, j.ID); err != nil {
		t.Fatal(err)
	}
	return j
}

type payload struct {
	Type string    `json:"type"`
	Job  store.Job `json:"job"`
}

func verified(t *testing.T, r received) payload {
	t.Helper()
	if err := webhook.Verify(secret, r.header, r.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("delivery does not verify: %v", err)
	}
	var p payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return p
}

func (e *env) events(t *testing.T, owner, jobID string) []*store.Event {
	t.Helper()
	evs, err := e.st.JobEvents(context.Background(), owner, jobID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// waitStatus polls the event's status through the store: the worker records a
// try after the receiver has answered, so the receiver's signal comes first.
func (e *env) waitStatus(t *testing.T, owner, jobID, status string, tries int) *store.Event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := e.events(t, owner, jobID)
		if len(evs) == 1 && evs[0].Status == status && len(evs[0].Deliveries) == tries {
			return evs[0]
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(evs)
			t.Fatalf("event of job %s never reached %s after %d tries: %s", jobID, status, tries, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSignedDeliveryPerTerminalJob(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	e := setup(t, rc.srv.URL, 5*time.Second)
	e.start(t)
	won := e.succeed(t, "acme", "k1")
	cancelled := e.cancel(t, "acme", "k2")
	other := e.cancel(t, "globex", "k3") // globex has no webhook: no event at all

	seen := map[string]payload{}
	for range 2 {
		r := rc.next(t)
		p := verified(t, r)
		seen[p.Job.ID] = p
		evs := e.events(t, "acme", p.Job.ID)
		if len(evs) != 1 || evs[0].ID != r.header.Get(webhook.HeaderID) {
			t.Fatalf("webhook-id %s is not the job's event id (events %+v)", r.header.Get(webhook.HeaderID), evs)
		}
		// An Idempotency-Key too, the try's own: net/http resends a POST
		// that a closed kept-alive connection lost only when it has one.
		if got := r.header.Get("Idempotency-Key"); !tryKey(evs[0].ID, 1).MatchString(got) {
			t.Fatalf("Idempotency-Key %q, want the event id, the try's number and a part of its lease's, %s.1.<8 hex>", got, evs[0].ID)
		}
	}
	if p := seen[won.ID]; p.Type != "job.succeeded" || p.Job.State != store.JobSucceeded || string(p.Job.Result) != `{"ok":true}` {
		t.Fatalf("succeeded job's delivery: %+v", p)
	}
	if p := seen[cancelled.ID]; p.Type != "job.cancelled" || p.Job.State != store.JobCancelled {
		t.Fatalf("cancelled job's delivery: %+v", p)
	}
	ev := e.waitStatus(t, "acme", won.ID, store.EventDelivered, 1)
	if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != 204 || d.Error != nil || d.URL != rc.srv.URL {
		t.Fatalf("recorded try: %+v", d)
	}
	if evs := e.events(t, "globex", other.ID); len(evs) != 0 {
		t.Fatalf("owner without webhook got events: %+v", evs)
	}
	if _, err := e.st.JobEvents(context.Background(), "globex", won.ID); err != store.ErrNotFound {
		t.Fatalf("another owner's job events: err=%v, want ErrNotFound", err)
	}
}

func TestRedeliveryAfter500AndTimeoutKeepsTheWebhookID(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		switch n {
		case 1:
			return http.StatusInternalServerError
		case 2:
			return 0 // no answer: the try times out
		}
		return http.StatusOK
	})
	e := setup(t, rc.srv.URL, 300*time.Millisecond)
	e.start(t)
	j := e.cancel(t, "acme", "k1")
	first := rc.next(t)
	verified(t, first)
	for range 2 {
		r := rc.next(t)
		verified(t, r)
		if r.header.Get(webhook.HeaderID) != first.header.Get(webhook.HeaderID) || string(r.body) != string(first.body) {
			t.Fatalf("redelivery changed: id %s body %s, first id %s body %s",
				r.header.Get(webhook.HeaderID), r.body, first.header.Get(webhook.HeaderID), first.body)
		}
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventDelivered, 3)
	d := ev.Deliveries
	if d[0].StatusCode == nil || *d[0].StatusCode != 500 || d[0].Error == nil {
		t.Fatalf("try 1: %+v", d[0])
	}
	if d[1].StatusCode != nil || d[1].Error == nil || *d[1].Error != "no answer within 300ms" {
		t.Fatalf("try 2 (timeout): %+v", d[1])
	}
	if d[2].StatusCode == nil || *d[2].StatusCode != 200 || d[2].Error != nil || ev.DeliveredAt == nil {
		t.Fatalf("try 3: %+v", d[2])
	}
}

func TestRolledBackTransitionIsNotDelivered(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	rolledBack := e.newJob(t, "acme", "k1")
	tx, err := e.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE jobs SET state = 'cancelled' WHERE id = $1`, rolledBack.ID); err != nil {
		t.Fatal(err)
	}
	var inTx int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1`, rolledBack.ID).Scan(&inTx); err != nil || inTx != 1 {
		t.Fatalf("inside the transaction the event exists: n=%d err=%v", inTx, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	committed := e.cancel(t, "acme", "k2")
	e.start(t)
	p := verified(t, rc.next(t))
	if p.Job.ID != committed.ID {
		t.Fatalf("delivered job %s, want only the committed %s", p.Job.ID, committed.ID)
	}
	var events, riverJobs int
	_ = e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1`, rolledBack.ID).Scan(&events)
	_ = e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&riverJobs)
	if events != 0 || riverJobs != 1 {
		t.Fatalf("after rollback: %d events of the rolled-back job, %d delivery jobs (want 0 and 1)", events, riverJobs)
	}
	select {
	case r := <-rc.got:
		t.Fatalf("a second delivery arrived: %s", r.body)
	default:
	}
}

// A transition committed while no delivery client runs (the process died right
// after the commit) is delivered by the next client on the same database; a
// client stopped in the middle of a try leaves it to be retried too.
func TestCommittedEventIsDeliveredAfterRestart(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return 0 // the first client is stopped while this try hangs
		}
		return http.StatusOK
	})
	e := setup(t, rc.srv.URL, 30*time.Second)
	j := e.cancel(t, "acme", "k1") // committed; nothing is running
	e.start(t)
	first := rc.next(t)
	stopCtx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_ = e.svc.Stop(stopCtx) // cancels the hanging try

	second := newService(t, e.db, 5*time.Second)
	if err := second.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	r := rc.next(t)
	verified(t, r)
	if r.header.Get(webhook.HeaderID) != first.header.Get(webhook.HeaderID) {
		t.Fatal("the redelivery after restart has a different webhook-id")
	}
	e.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
}

// An endpoint that is slow to answer gets its events side by side: 30 events
// whose endpoint answers none of them until all 30 are in flight are all
// delivered. River's defaults (10 workers, one fetch per 100 ms) let 10 wait
// on the endpoint and no more: an owner got at most 10 events a second from
// an endpoint that takes a second to answer, and 100 a second at best. (Up to
// webhooks.max_inflight_per_owner, by default a quarter of the workers, 25:
// here an owner may take every worker.)
func TestSlowEndpointGetsEventsSideBySide(t *testing.T) {
	const n = 30
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if seen.Add(1) <= n {
			arrived.Done()
		}
		select {
		case <-all:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL, time.Minute) // no try times out while the test waits
	e.svc = newServiceOf(t, e.db, webhook.ServiceConfig{
		Config:              webhook.Config{Timeout: time.Minute, Secrets: map[string]string{"acme": secret}},
		MaxInflightPerOwner: webhook.DefaultWorkers,
	})
	jobs := make([]*store.Job, n)
	for i := range jobs {
		jobs[i] = e.cancel(t, "acme", fmt.Sprintf("k%d", i))
	}
	e.start(t)
	select {
	case <-all:
	case <-time.After(45 * time.Second):
		t.Fatalf("only %d of %d events were in flight at once", seen.Load(), n)
	}
	for _, j := range jobs {
		e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1)
	}
}
