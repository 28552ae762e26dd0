package api_test

import (
	"net/http"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A request that every target refused as over its per-minute limit by
// itself (Groq's 413, OpenAI's 429 "Request too large": kind rate_limited,
// the caller's fault) is answered 413 request_too_large — the caller must
// shorten it — not 502 upstream_failed, which OpenAI's SDKs resend
// unchanged. An ordinary rate limit on every target stays a 502. Found by
// review.
func TestChatRequestTooLargeForEveryTargetsLimitIs413(t *testing.T) {
	tooLarge := func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindRateLimited, Fault: providers.FaultCaller, Action: providers.ActionFailover,
			StatusCode: 413, Message: "the request alone is larger than the router's account's per-minute limit at this target"}}
	}
	b := setup(t, options{respond: tooLarge, fallback: tooLarge})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	typ, code, param, _ := openAIErr(r)
	if r.status != http.StatusRequestEntityTooLarge || typ != "invalid_request_error" || code != "request_too_large" || param != "messages" {
		t.Fatalf("too large for every target's limit: status %d body %s; want 413 request_too_large", r.status, r.raw)
	}

	limited := func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindRateLimited, Fault: providers.FaultProvider, Action: providers.ActionFailover,
			StatusCode: 429, Message: "rate limited"}}
	}
	b = setup(t, options{respond: limited, fallback: limited})
	r = b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	if _, code, _, _ := openAIErr(r); r.status != http.StatusBadGateway || code != "upstream_failed" {
		t.Fatalf("rate limited on every target: status %d body %s; want 502 upstream_failed", r.status, r.raw)
	}
}
