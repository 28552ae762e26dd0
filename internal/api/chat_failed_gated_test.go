package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A chat call whose job failed while the default conformance gate kept the
// route's fallback out of the race (nobody had run the suite on it) was told
// in its 502 only to retry the job or resend under a new key — both gated
// the same way, to fail again — and the job's error named only the primary:
// the gate's refusal was in routing alone, which next_step reads but the
// chat answer did not. The 502 now says, as next_step does, which targets
// the gate skipped, why, and that a retry helps once they pass.
func TestChatFailedJobSaysConformanceGateSkippedFallbacks(t *testing.T) {
	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	b := setupGated(t)
	gated := []string{
		"conformance gate",
		"fallback: no passing conformance run for triage@",
		"`router conformance run --provider fallback --prompt triage`",
		"a retry now would be gated the same way",
	}

	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "chat-gated-1")
	id := r.header.Get("X-Router-Job-Id")
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusBadGateway || code != "upstream_failed" || id == "" {
		t.Fatalf("failed job: %d %s, want 502 upstream_failed with X-Router-Job-Id", r.status, r.raw)
	}
	if n := len(b.fallback.Requests()); n != 0 {
		t.Fatalf("the gated fallback was called %d times", n)
	}
	for _, want := range append(gated, "once the router's operator has made them pass, start a new round with POST /v1/jobs/"+id+"/retry",
		"a new Idempotency-Key") {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}

	nokey := b.do(t, http.MethodPost, chatPath, acmeKey, body)
	_, code, _, msg = openAIErr(nokey)
	if nokey.status != http.StatusBadGateway || code != "upstream_failed" || strings.Contains(msg, "Idempotency-Key") {
		t.Fatalf("failed job of a call without a key: %d %q, want 502 upstream_failed and no advice about keys", nokey.status, msg)
	}
	for _, want := range gated {
		if !strings.Contains(msg, want) {
			t.Errorf("message of a call without a key %q does not say %q", msg, want)
		}
	}
}
