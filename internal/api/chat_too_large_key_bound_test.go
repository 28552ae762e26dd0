package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A keyed chat call whose job failed because every target refused the
// request as over its per-minute limit by itself (Groq's 413, OpenAI's 429
// "Request too large") is answered 413 request_too_large: the caller is to
// shorten the request. It does, and resends with the same Idempotency-Key —
// as after the router's own pre-storage 400 context_length_exceeded, which
// leaves the key free — and gets 409 idempotency_key_reused: the key stays
// bound to the failed job, which the 413 never says. Its siblings do
// (content_policy_violation, the provider's context_length_exceeded and
// bad request: "send it with a new Idempotency-Key: this key stays bound to
// the failed job", keyBoundFix, rchat13 F2); this one was left out.
func TestChatRequestTooLargeSaysKeyIsBound(t *testing.T) {
	tooLarge := func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindRateLimited, Fault: providers.FaultCaller, Action: providers.ActionFailover,
			StatusCode: 413, Message: "Request too large for model: Limit 6000, Requested 9000"}}
	}
	b := setup(t, options{respond: tooLarge, fallback: tooLarge})
	const key = "too-large-turn-7"
	long := `{"model":"default","messages":[{"role":"user","content":"` + strings.Repeat("long history ", 50) + `"}]}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, long, "Idempotency-Key", key)
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusRequestEntityTooLarge || code != "request_too_large" {
		t.Fatalf("first call: %d %s; want 413 request_too_large", r.status, r.raw)
	}
	short := `{"model":"default","messages":[{"role":"user","content":"short"}]}`
	again := b.do(t, http.MethodPost, chatPath, acmeKey, short, "Idempotency-Key", key)
	_, code2, _, _ := openAIErr(again)
	t.Logf("413 message: %q", msg)
	t.Logf("shortened request resent with the same key: %d %s", again.status, code2)
	if !strings.Contains(msg, "new Idempotency-Key") || !strings.Contains(msg, "stays bound") {
		t.Fatalf("the 413 request_too_large of a keyed call whose job failed does not say that its key stays bound to the failed job "+
			"(the shortened request under the same key is %d %s): %q", again.status, code2, msg)
	}
}
