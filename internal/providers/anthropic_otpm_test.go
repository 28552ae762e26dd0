package providers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// anthropicOTPM is Anthropic's 429 for the output-tokens-per-minute limit
// (the wording quoted by LiteLLM and SDK users: "… of 8,000 output tokens per
// minute", "… of 2,000 output tokens per minute"). Anthropic's rate-limits
// page: "OTPM rate limits are estimated based on max_tokens at the beginning
// of each request". A request whose max_tokens alone is above the limit is
// refused every time, however long it waits.
const anthropicOTPM = "This request would exceed the rate limit for your organization (c73989f9-60bd-43d1-b427-c4f24518c4c4) of 2,000 output tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."

// The input-tokens-per-minute 429 for a request larger than the limit by
// itself fails over without retrying the target (overInputLimit); the same
// 429 for output tokens, for a request whose max_tokens sent — the caller's,
// or providers[].max_tokens (4096 by default) when it set none — is above the
// limit, is retried on the same target after its Retry-After, refused again
// each time, and counted against the target's breaker.
func TestAnthropicOTPMOverLimitFailsOver(t *testing.T) {
	own := testRequest()
	own.MaxTokens = 8000
	for _, tc := range []struct {
		name string
		req  *Request
	}{
		{"provider max_tokens 4096 sent", testRequest()},
		{"caller max_tokens 8000", own},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: anthropicOTPM,
					Header: map[string]string{"retry-after": "30"}}))
				_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), tc.req)
				e := mustError(t, err)
				if e.Action != ActionFailover || e.Fault == FaultProvider {
					t.Errorf("got %s/%s/%s retry-after %v: max_tokens is above the 2,000 output tokens per minute limit, no wait lets this target take it; want fail over, not counted as the provider's fault",
						e.Kind, e.Fault, e.Action, e.RetryAfter)
				}
			})
		}
	}
}

// The same 429 for a request whose max_tokens is under the limit stays an
// ordinary rate limit, retried (guards the fix).
func TestAnthropicOTPMUnderLimitStillRetried(t *testing.T) {
	small := testRequest()
	small.MaxTokens = 500
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: anthropicOTPM,
		Header: map[string]string{"retry-after": "30"}}))
	_, err := newAnthropicAdapter(t, fake.URL, nil).Complete(context.Background(), small)
	e := mustError(t, err)
	if e.Kind != KindRateLimited || e.Action != ActionRetry || e.RetryAfter <= 0 {
		t.Errorf("got %s/%s/%s, want rate_limited/retry", e.Kind, e.Fault, e.Action)
	}
}

// Who is told to fix a max_tokens over the output-tokens-per-minute limit:
// the caller's own is the caller's (rate_limited, FaultCaller), the
// provider's providers[].max_tokens, sent when the request set none, is the
// operator's (misconfigured, naming the setting). Neither tells the tenant
// the account's organization or limits.
func TestAnthropicOTPMOverLimitNamesWhoFixesIt(t *testing.T) {
	own := testRequest()
	own.MaxTokens = 8000
	for _, tc := range []struct {
		name        string
		req         *Request
		kind        Kind
		fault       Fault
		msgContains string
	}{
		{"provider max_tokens 4096 sent", testRequest(), KindMisconfigured, FaultRouter, "providers[].max_tokens (4096)"},
		{"caller max_tokens 8000", own, KindRateLimited, FaultCaller, "a lower max_tokens"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: anthropicOTPM,
					Header: map[string]string{"retry-after": "30"}}))
				_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), tc.req)
				e := mustError(t, err)
				if e.Kind != tc.kind || e.Fault != tc.fault || e.Action != ActionFailover {
					t.Errorf("got %s/%s/%s, want %s/%s/failover", e.Kind, e.Fault, e.Action, tc.kind, tc.fault)
				}
				if !strings.Contains(e.Message, tc.msgContains) {
					t.Errorf("message %q, want it to say %q", e.Message, tc.msgContains)
				}
				if strings.Contains(e.Message, "c73989f9") || strings.Contains(e.Message, "2,000") || !strings.Contains(e.ProviderMessage, "c73989f9") {
					t.Errorf("message %q (provider's %q): want the router's message, the provider's kept for the log", e.Message, e.ProviderMessage)
				}
			})
		}
	}
}

// providers[].max_tokens under the limit, sent for a request that set
// none: the 429 is the minute's other requests', retried after its
// Retry-After.
func TestAnthropicOTPMProviderMaxTokensUnderLimitStillRetried(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: anthropicOTPM,
		Header: map[string]string{"retry-after": "30"}}))
	for _, stream := range []bool{false, true} {
		_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream, c.MaxTokens = stream, 2000 }).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindRateLimited || e.Fault != FaultProvider || e.Action != ActionRetry || e.RetryAfter <= 0 {
			t.Errorf("stream=%v: got %s/%s/%s retry-after %v, want rate_limited/provider/retry after 30s", stream, e.Kind, e.Fault, e.Action, e.RetryAfter)
		}
	}
}
