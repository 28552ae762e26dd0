package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Groq answers a request larger than the router's account's tokens-per-minute
// limit with 413, type tokens, code rate_limit_exceeded. It is that account's
// limit on this target (another target may take the request), not the
// caller's bad request; and as a rate limit its message, which names the
// router's organization and tier, is kept from the tenant.
func TestRequestOverTokensPerMinuteFailsOver(t *testing.T) {
	groq := apiErrorBody("Request too large for model `llama-3.3-70b-versatile` in organization `org_01jp8byqwpfx9sp1m0dbhb6a1e` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.", "tokens", nil, "rate_limit_exceeded")
	// OpenAI says the same with 429.
	openaiBody := apiErrorBody("Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.", "tokens", "messages", "rate_limit_exceeded")
	for _, tc := range []struct {
		name   string
		status int
		body   string
		secret string
	}{
		{"groq 413", 413, groq, "org_01jp"},
		{"openai 429", 429, openaiBody, "org-abc"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, tc.status, nil, tc.body) })
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindRateLimited || e.Fault != FaultCaller || e.Action != ActionFailover {
					t.Errorf("got %s/%s/%s, want rate_limited/caller/failover: the account's per-minute limit is below this one request, so neither stopping the job nor retrying the target helps, and the target's breaker must not count it (one tenant's oversized prompts would open it for all)", e.Kind, e.Fault, e.Action)
				}
				if strings.Contains(e.Message, tc.secret) || !strings.Contains(e.ProviderMessage, tc.secret) {
					t.Errorf("message %q: the tenant-visible message names the router's organization (provider's kept: %q)", e.Message, e.ProviderMessage)
				}
			})
		}
	}
}

// An ordinary rate limit is still retried on the same target.
func TestOrdinaryRateLimitStillRetried(t *testing.T) {
	e := ClassifyStatus("p", 429, "rate_limit_exceeded", "Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1.")
	if e.Kind != KindRateLimited || e.Action != ActionRetry {
		t.Fatalf("got %s/%s", e.Kind, e.Action)
	}
}
