package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// SPEC §16: a revoked key is refused from the next request on, on every
// replica. The key cache's TTL is an hour here, so only the revocation's
// notification, evicting the key on the listening replica, can explain the
// 401 that follows it. Found by review.
func TestRevokedKeyIsRefusedAsItsNotificationArrives(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	srv, err := server.New(ctx, newConfig(t, db, newFakeLLM(t).srv.URL, "auth: {cache_ttl: 1h}\n"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant := httptest.NewServer(srv.Handler)
	defer tenant.Close()
	wait, cancel := context.WithTimeout(ctx, 60*time.Second) // a guard against a hang, not a timing assertion
	defer cancel()
	select {
	case <-server.ListenerReady(srv):
	case <-wait.Done():
		t.Fatal("the listener never issued its LISTEN")
	}
	created, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	url := tenant.URL + "/v1/jobs/0196f1d2-0000-7000-8000-000000000000"
	if status, body := get(t, url, created.Key); status != http.StatusNotFound { // authenticated, and cached
		t.Fatalf("before the revocation: %d %s, want 404 (an authenticated request for no job)", status, body)
	}
	evicted := server.AuthEvicted(srv)
	if err := db.Store.RevokeAPIKey(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-evicted:
	case <-wait.Done():
		t.Fatal("the revocation's notification never evicted the key from the cache")
	}
	if status, body := get(t, url, created.Key); status != http.StatusUnauthorized {
		t.Fatalf("after the revocation: %d %s, want 401 well inside the cache's TTL (1h)", status, body)
	}
}
