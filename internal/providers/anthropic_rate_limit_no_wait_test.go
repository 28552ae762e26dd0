package providers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// anthropicITPM is Anthropic's 429 for the input-tokens-per-minute limit:
// the same words whether the minute's other requests used the limit up or
// this one request is larger than it.
const anthropicITPM = "This request would exceed the rate limit for your organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 1,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."

// A 429 that no wait fixes was retried on the same target after its
// Retry-After, and refused again each time: Anthropic's "Extra usage is
// required for long context requests." (the router's account may not send
// a prompt this long to this target), and the input-tokens-per-minute
// limit when the request alone is larger than it. Like OpenAI's "Request
// too large … on tokens per min" (failOverTooLarge), they fail over without
// retrying the target, FaultCaller (the target is well: one tenant's long
// prompts must not open its breaker for every tenant), and the tenant reads
// the router's message, not the account's limits.
func TestAnthropicRateLimitNoWaitFixesFailsOver(t *testing.T) {
	long := testRequest()
	long.Messages[1].Content = strings.Repeat("word ", 2000) // 10,000 bytes: some 2,500 tokens, over 1,000
	for _, tc := range []struct {
		name, msg string
		req       *Request
		secret    string
	}{
		{"extra usage for long context", "Extra usage is required for long context requests.", testRequest(), "Extra usage"},
		{"one request over the input tokens per minute", anthropicITPM, long, "0dccdde6"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: tc.msg,
					Header: map[string]string{"retry-after": "30"}}))
				_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), tc.req)
				e := mustError(t, err)
				if e.Kind != KindRateLimited || e.Fault != FaultCaller || e.Action != ActionFailover {
					t.Errorf("got %s/%s/%s, want rate_limited/caller/failover: no wait lets this target take the request", e.Kind, e.Fault, e.Action)
				}
				if strings.Contains(e.Message, tc.secret) || !strings.Contains(e.ProviderMessage, tc.secret) {
					t.Errorf("message %q (provider's %q): want the router's message, the provider's kept for the log", e.Message, e.ProviderMessage)
				}
			})
		}
	}
}

// The same input-tokens-per-minute 429 for a request well under the limit
// is an ordinary rate limit: the minute's other requests used it up, and
// the target is retried after its Retry-After.
func TestAnthropicInputRateLimitStillRetried(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: anthropicITPM,
		Header: map[string]string{"retry-after": "30"}}))
	for _, stream := range []bool{false, true} {
		_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindRateLimited || e.Fault != FaultProvider || e.Action != ActionRetry || e.RetryAfter <= 0 {
			t.Errorf("stream=%v: got %s/%s/%s retry-after %v, want rate_limited/provider/retry after 30s", stream, e.Kind, e.Fault, e.Action, e.RetryAfter)
		}
	}
}
