package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Anthropic answers a disabled organization (the router's account) with HTTP
// 400 invalid_request_error "This organization has been disabled.". It was
// bad_request, the caller's fault: every job on a Claude-first route stopped
// instead of failing over, the breaker never opened, and the tenant read the
// router's account state. It is auth now — fails over, counts against the
// breaker, its text kept for the router's log only — as the credit-balance
// message is quota_exceeded. Found by review.
func TestAnthropicDisabledOrganizationIsTheRoutersAccount(t *testing.T) {
	const disabled = "This organization has been disabled."
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { anthReal400(w, disabled) }))
	defer srv.Close()
	var errs []*Error
	for _, stream := range []bool{false, true} {
		_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		errs = append(errs, mustError(t, err))
	}
	errs = append(errs, classifyAnthropicAPI("claude", 0, "invalid_request_error", "", disabled, nil)) // an error event in a stream
	for i, e := range errs {
		if e.Fault == FaultCaller || e.Action == ActionStop {
			t.Errorf("case %d: %s/%s/%s, want the router's account: fail over", i, e.Kind, e.Fault, e.Action)
		}
		if e.Kind != KindAuth || e.Fault != FaultRouter || e.Action != ActionFailover {
			t.Errorf("case %d: %s/%s/%s, want auth/router/failover", i, e.Kind, e.Fault, e.Action)
		}
		if strings.Contains(e.Message, "organization") || e.Message != operatorsMessages[KindAuth] {
			t.Errorf("case %d: the tenant reads %q, want the router's message", i, e.Message)
		}
		if e.ProviderMessage != disabled {
			t.Errorf("case %d: ProviderMessage %q, want Anthropic's, for the router's log", i, e.ProviderMessage)
		}
	}
	// The credit balance stays quota_exceeded; a plain invalid request the caller's.
	if e := classifyAnthropicAPI("claude", 400, "invalid_request_error", "", anthropicOutOfCredit, nil); e.Kind != KindQuotaExceeded {
		t.Errorf("out of credit: %s, want quota_exceeded", e.Kind)
	}
	if e := classifyAnthropicAPI("claude", 400, "invalid_request_error", "", "messages.0.content: Field required", nil); e.Kind != KindBadRequest {
		t.Errorf("a plain invalid request: %s, want bad_request", e.Kind)
	}
}
