package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// A rolling update that adds a route: new replicas serve route "default",
// old ones do not yet. A keyed chat call reached a new replica, whose job
// ran (and was billed); its answer was lost, and the client's resend, with
// the same Idempotency-Key and body, reaches an old replica: 404
// model_not_found, "the model "default" does not exist on this router" —
// for a job that exists and succeeded. OpenAI's SDKs do not resend a 404;
// the caller gives up, or sends the call again with a new key (a second
// bill). docs/idempotency.md: "A client whose answer was lost thus never
// reads 'not done' for a job that exists", and it excuses the chat 404 only
// because "its key's scope is the route, which the unknown model no longer
// names" — here the model IS the route's name: the scope (chat:default) and
// the fingerprint (the normalised request) need no route configuration, as
// POST /v1/jobs's look-up before its 422 unknown-route needs none.
// (rchat11 suspicion 1.)
func TestChatResendToReplicaWithoutTheNewRouteFindsItsJob(t *testing.T) {
	b := setup(t, options{})
	body := `{"model":"default","messages":[{"role":"user","content":"hello"}]}`
	first := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "rolling-1")
	if first.status != http.StatusOK {
		t.Fatalf("first call on a new replica: %d %s", first.status, first.raw)
	}
	// An old replica: same database, route "default" not configured yet.
	old := httptest.NewServer(api.New(api.Config{LeaseOwner: "old", Lease: 30 * time.Second}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"legacy": true},
		Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: b.db.Store},
	}))
	defer old.Close()
	again, err := send(old.URL+chatPath, http.MethodPost, acmeKey, body, "Idempotency-Key", "rolling-1")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _, msg := openAIErr(again)
	if again.status != http.StatusOK || again.header.Get("X-Router-Job-Id") != first.header.Get("X-Router-Job-Id") {
		t.Fatalf("the same keyed request resent to a replica without the route: %d %s %q (X-Router-Job-Id %q); "+
			"want its job's answer (200, job %s): the job exists and succeeded",
			again.status, code, msg, again.header.Get("X-Router-Job-Id"), first.header.Get("X-Router-Job-Id"))
	}
}
