package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// All owners' deliveries share one River queue and the replica's workers.
// An owner's endpoint that does not answer holds at most
// max_inflight_per_owner of them (one here, of two): another owner's event
// is delivered meanwhile, and the first owner's next event waits its turn —
// snoozed, which is neither a recorded try nor a River attempt, and never
// gives up on the event, even one past webhooks.retry_for — until the hung
// try ends. Without the bound both workers waited on the hung endpoint and
// the other owner's event behind them, for webhooks.timeout per try.
func TestOneOwnersHungEndpointLeavesOtherOwnersDelivered(t *testing.T) {
	release := make(chan struct{})
	acmeFirst := make(chan struct{})
	var acmeSeen atomic.Int64
	acme := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if acmeSeen.Add(1) == 1 {
			close(acmeFirst)
		}
		select {
		case <-release:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(acme.Close)
	globexGot := make(chan struct{}, 10)
	globex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		globexGot <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(globex.Close)

	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": acme.URL, "globex": globex.URL}); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, st: db.Store, svc: newServiceOf(t, db, webhook.ServiceConfig{
		Config:     webhook.Config{Timeout: time.Minute, Secrets: map[string]string{"acme": secret, "globex": secret}},
		MaxWorkers: 2, // max_inflight_per_owner: its default, max(1, 2/4) = 1
	})}
	a1 := e.cancel(t, "acme", "a1")
	a2 := e.cancel(t, "acme", "a2")
	g1 := e.cancel(t, "globex", "g1")
	// One of acme's events is past the retry window: snoozed, it is not
	// abandoned (only a failed try gives up on an event).
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE job_id = $1`, a2.ID); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	<-acmeFirst // one worker now waits on acme's endpoint
	select {
	case <-globexGot:
	case <-time.After(30 * time.Second):
		t.Fatal("globex's event waited behind acme's unresponsive endpoint: one owner's endpoint holds every delivery worker")
	}
	e.waitStatus(t, "globex", g1.ID, store.EventDelivered, 1)
	if n := acmeSeen.Load(); n != 1 {
		t.Fatalf("acme's endpoint got %d tries at once, over its limit of 1", n)
	}
	close(release)
	released = true
	for _, j := range []*store.Job{a1, a2} {
		e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1) // one try each: the snoozes are none
	}
	// River counted one attempt per delivery, and no error: the snoozes are
	// not attempts, so they neither lengthen the backoff nor use up
	// max_attempts.
	var jobs, snoozed int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE (metadata->>'snoozes')::int > 0)
		FROM river_job WHERE kind = 'webhook_delivery' AND attempt = 1 AND coalesce(cardinality(errors), 0) = 0`).Scan(&jobs, &snoozed); err != nil {
		t.Fatal(err)
	}
	if jobs != 3 || snoozed == 0 {
		t.Fatalf("%d of 3 delivery jobs ended with one attempt and no error, %d of them snoozed (want at least 1)", jobs, snoozed)
	}
}
