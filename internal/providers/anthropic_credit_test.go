package providers

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// anthropicOutOfCredit is Anthropic's answer to an account without credit,
// sent with HTTP 400 and type invalid_request_error.
const anthropicOutOfCredit = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."

// Anthropic answers an account out of credit with HTTP 400
// invalid_request_error. It was classified bad_request — the caller's fault:
// the job stopped without failover, the target's breaker counted a success
// and never opened, and the tenant read the router's billing message.
// docs/operations.md: the router's own account problems (402, quota) fail
// over, count against the breaker, and their message is hidden from
// tenants. It is quota_exceeded now, plain, streamed, and as an error event
// inside a stream. Found by review.
func TestAnthropicOutOfCreditIsQuotaExceeded(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: anthropicOutOfCredit}))
	var errs []*Error
	for _, stream := range []bool{false, true} {
		_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		errs = append(errs, mustError(t, err))
	}
	errs = append(errs, classifyAnthropicAPI("claude", 0, "invalid_request_error", "", strings.ToUpper(anthropicOutOfCredit), nil))
	for i, e := range errs {
		if e.Kind != KindQuotaExceeded || e.Action != ActionFailover || e.Fault != FaultRouter {
			t.Errorf("case %d: %s/%s/%s, want quota_exceeded/failover/router", i, e.Kind, e.Action, e.Fault)
		}
		if strings.Contains(strings.ToLower(e.Message), "credit balance") || e.Message != operatorsMessages[KindQuotaExceeded] {
			t.Errorf("case %d: the tenant reads %q, want the router's quota message, the billing text kept for the log", i, e.Message)
		}
		if !strings.EqualFold(e.ProviderMessage, anthropicOutOfCredit) {
			t.Errorf("case %d: ProviderMessage %q, want Anthropic's message for the router's log", i, e.ProviderMessage)
		}
	}
	// Another invalid_request_error stays the caller's.
	if e := classifyAnthropicAPI("claude", 400, "invalid_request_error", "", "messages: at least one message is required", nil); e.Kind != KindBadRequest {
		t.Errorf("a plain invalid request: %s, want bad_request", e.Kind)
	}
}
