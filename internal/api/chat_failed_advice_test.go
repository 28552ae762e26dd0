package api_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat call whose job failed (502 upstream_failed) is answered the same on
// every resend with the same key, so the message says how to get out: retry
// the job, or send the request under a new key. The advice is true: after
// POST /v1/jobs/{id}/retry a resend with the same key gets the new round's
// answer. A call without a key is told nothing about keys (its resend is a
// new job anyway). Found by a newcomer walkthrough, as was "the job … is
// failed".
func TestChatFailedJobSaysHowToRecover(t *testing.T) {
	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	var fail atomic.Bool
	fail.Store(true)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		if fail.Load() {
			return providers.Step{Status: 500}
		}
		return providers.Step{}
	}})

	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "failed-advice-1")
	id := r.header.Get("X-Router-Job-Id")
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusBadGateway || code != "upstream_failed" || id == "" {
		t.Fatalf("failed job: %d %s, want 502 upstream_failed with X-Router-Job-Id", r.status, r.raw)
	}
	if !strings.HasPrefix(msg, "the job "+id+" failed: ") {
		t.Errorf("message %q, want it to begin %q", msg, "the job "+id+" failed: ")
	}
	for _, want := range []string{"POST /v1/jobs/" + id + "/retry", "a new Idempotency-Key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	again := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "failed-advice-1")
	if _, _, _, m := openAIErr(again); again.status != http.StatusBadGateway || m != msg {
		t.Errorf("resend with the same key: %d %q, want the same 502 %q", again.status, m, msg)
	}

	fail.Store(false)
	if rr := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, ""); rr.status >= 300 {
		t.Fatalf("retry as advised: %d %s", rr.status, rr.raw)
	}
	if ok := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "failed-advice-1"); ok.status != http.StatusOK ||
		ok.header.Get("X-Router-Job-Id") != id {
		t.Errorf("resend with the same key after the retry: %d (job %q) %s, want 200 from job %s", ok.status, ok.header.Get("X-Router-Job-Id"), ok.raw, id)
	}

	fail.Store(true)
	nokey := b.do(t, http.MethodPost, chatPath, acmeKey, body)
	_, code, _, msg = openAIErr(nokey)
	id = nokey.header.Get("X-Router-Job-Id")
	if nokey.status != http.StatusBadGateway || code != "upstream_failed" || !strings.HasPrefix(msg, "the job "+id+" failed: ") ||
		strings.Contains(msg, "Idempotency-Key") {
		t.Errorf("failed job of a call without a key: %d %q, want 502 upstream_failed beginning %q and no advice about keys",
			nokey.status, msg, "the job "+id+" failed: ")
	}
}
