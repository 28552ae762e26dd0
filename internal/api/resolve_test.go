package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// Issue 4, acceptance 2: a timed-out primary leaves the job unknown; a client
// retry creates nothing; a new attempt is refused; resolving it as failed lets
// the job continue to the fallback, which wins.
func TestUnknownJobResolveAndContinue(t *testing.T) {
	b := setup(t, options{
		timeout:  50 * time.Millisecond,
		respond:  func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	id := b.unknownJob(t, "u1")
	again := b.create(t, acmeKey, "u1", triageBody("hang"), "Prefer", "wait=1")
	if again.status != http.StatusAccepted || again.job() != id || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("client retry: %d %s", again.status, again.raw)
	}
	if n := b.count(t, "SELECT count(*) FROM attempts"); n != 1 {
		t.Fatalf("attempts = %d after a client retry, want 1", n)
	}
	retry := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	if retry.status != http.StatusConflict {
		t.Fatalf("retry of an unknown job: %d %s", retry.status, retry.raw)
	}
	// Resolving a non-existent attempt, or with a bad outcome, is refused.
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/9/resolve", acmeKey, `{"outcome":"failed"}`); r.status != http.StatusNotFound {
		t.Fatalf("resolve attempt 9: %d", r.status)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"maybe"}`); r.status != http.StatusBadRequest {
		t.Fatalf("bad outcome: %d", r.status)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", globexKey, `{"outcome":"failed"}`); r.status != http.StatusNotFound {
		t.Fatalf("another owner's resolve: %d", r.status)
	}
	res := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"failed","note":"provider dashboard shows no such request"}`, "Prefer", "wait=30")
	if res.status != http.StatusOK || res.body["state"] != "succeeded" {
		t.Fatalf("resolve failed: %d %s", res.status, res.raw)
	}
	attempts, _ := res.body["attempts"].([]any)
	if len(attempts) != 2 {
		t.Fatalf("attempts %v", attempts)
	}
	a1, a2 := attempts[0].(map[string]any), attempts[1].(map[string]any)
	if a1["state"] != "failed" || a2["provider"] != "fallback" || a2["state"] != "won" || res.body["completed_by"] != a2["id"] {
		t.Fatalf("attempts after resolve: %v / %v", a1, a2)
	}
	if b.primary.Calls() != 1 || b.fallback.Calls() != 1 {
		t.Fatalf("calls primary=%d fallback=%d", b.primary.Calls(), b.fallback.Calls())
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"failed"}`); r.status != http.StatusConflict {
		t.Fatalf("second resolve: %d", r.status)
	}
}

// Resolving an unknown attempt as succeeded validates the result and completes
// the job exactly once.
func TestResolveSucceededValidatesResult(t *testing.T) {
	b := setup(t, options{
		timeout: 50 * time.Millisecond,
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
	})
	id := b.create(t, acmeKey, "u2", triageBody("hang"), "Prefer", "wait=30").job()
	bad := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":{"category":"weather"}}`)
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(string(bad.raw), "violations") {
		t.Fatalf("invalid result: %d %s", bad.status, bad.raw)
	}
	good := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	if good.status != http.StatusOK || good.body["state"] != "succeeded" {
		t.Fatalf("resolve succeeded: %d %s", good.status, good.raw)
	}
	again := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	if again.status != http.StatusConflict {
		t.Fatalf("second resolve: %d", again.status)
	}
	if n := b.count(t, "SELECT count(*) FROM attempts WHERE state = 'won'"); n != 1 {
		t.Fatalf("won attempts = %d", n)
	}
}

// A failed job can be retried by the caller: it runs again under the same id.
func TestRetryFailedJob(t *testing.T) {
	b := setup(t, options{respond: func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			return providers.Step{Output: `{"category":"nope"}`}
		}
		return providers.Step{Output: validTriage}
	}})
	first := b.create(t, acmeKey, "r1", triageBody("x"), "Prefer", "wait=30")
	if first.body["state"] != "failed" {
		t.Fatalf("first: %s", first.raw)
	}
	id := first.job()
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Prefer", "wait=30")
	if r.status != http.StatusOK || r.body["state"] != "succeeded" || r.job() != id {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, ""); r.status != http.StatusConflict {
		t.Fatalf("retry of a succeeded job: %d", r.status)
	}
}

// Cancelling a running job stops its attempt; it can no longer win.
func TestCancelRunningJob(t *testing.T) {
	called := make(chan struct{}, 1)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		called <- struct{}{}
		return providers.Step{Hang: true}
	}})
	id := b.create(t, acmeKey, "c1", triageBody("x")).job()
	<-called
	r := b.do(t, "POST", "/v1/jobs/"+id+"/cancel", acmeKey, "")
	if r.status != http.StatusOK || r.body["state"] != "cancelled" {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	a := r.body["attempts"].([]any)[0].(map[string]any)
	if a["state"] != "cancelled" {
		t.Fatalf("attempt %v", a)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/cancel", acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("second cancel: %d", r.status)
	}
	if r := b.create(t, acmeKey, "c1", triageBody("x")); r.status != http.StatusOK || r.body["state"] != "cancelled" {
		t.Fatalf("replay of a cancelled job: %d %s", r.status, r.raw)
	}
}

// unknownJob creates a triage job under key whose first attempt hangs past
// the bundle's timeout (the bundle's primary answers Hang), so the job ends
// unknown, and returns its id.
func (b *bundle) unknownJob(t *testing.T, key string) string {
	t.Helper()
	first := b.create(t, acmeKey, key, triageBody("hang"), "Prefer", "wait=30")
	if first.status != http.StatusAccepted || first.body["state"] != "unknown" {
		t.Fatalf("precondition: %d %s; want the job unknown", first.status, first.raw)
	}
	return first.job()
}
