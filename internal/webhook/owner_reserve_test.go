package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// A few owners whose endpoints hang do not hold every worker between them:
// with 8 workers and max_inflight_per_owner at its default (8/4 = 2), four
// such owners with two events each held all 8 (as 4 × 25 do of 100 by
// default), and a fifth owner's event waited behind them for
// webhooks.timeout per try. Owners with a delivery in flight now leave a
// reserve of the workers to owners with none, and the fifth owner's event is
// delivered while the four still hang. Found by review.
func TestHungOwnersLeaveAWorkerForAnotherOwner(t *testing.T) {
	release := make(chan struct{})
	started := make(chan string, 16) // the hung owner of each request, as it arrives
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		started <- strings.TrimPrefix(r.URL.Path, "/")
		select {
		case <-release:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close) // last: after release and the service's stop
	healthyGot := make(chan struct{}, 10)
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		healthyGot <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(healthy.Close)

	hungOwners := []string{"h1", "h2", "h3", "h4"}
	urls := map[string]string{"ok": healthy.URL}
	secrets := map[string]string{"ok": secret}
	for _, o := range hungOwners {
		urls[o], secrets[o] = hung.URL+"/"+o, secret
	}
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if err := db.Store.SyncConfigWebhooks(context.Background(), urls); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, st: db.Store, svc: newServiceOf(t, db, webhook.ServiceConfig{
		Config:     webhook.Config{Timeout: time.Minute, Secrets: secrets},
		MaxWorkers: 8, // max_inflight_per_owner: its default, max(1, 8/4) = 2
	})}
	for _, o := range hungOwners {
		e.cancel(t, o, o+"-1")
		e.cancel(t, o, o+"-2")
	}
	e.start(t)
	t.Cleanup(func() { close(release) }) // first: the hung tries end, the service stops at once

	// Every hung owner has a delivery in flight (an owner with none always
	// gets a worker, so each does).
	waiting := map[string]bool{"h1": true, "h2": true, "h3": true, "h4": true}
	for len(waiting) > 0 {
		select {
		case o := <-started:
			delete(waiting, o)
		case <-time.After(30 * time.Second):
			t.Fatalf("owners %v never had a delivery in flight", waiting)
		}
	}
	ok := e.cancel(t, "ok", "ok-1")
	select {
	case <-healthyGot:
	case <-time.After(30 * time.Second):
		t.Fatal("the healthy owner's event waited behind four owners' unresponsive endpoints: together they hold every delivery worker")
	}
	e.waitStatus(t, "ok", ok.ID, store.EventDelivered, 1)
}
