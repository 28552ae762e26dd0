package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// Anthropic answers an organization or workspace that reached the spend
// limit its operator set with HTTP 400 invalid_request_error (Anthropic's
// errors page: "The API also returns a 400 when usage reaches an
// organization or workspace spend limit you set"), the message beginning
// "You have reached your specified API usage limits" (or "... specified
// workspace API usage limits"). It is the router's own account, as an
// out-of-credit 400 is (accountRefusal): it must be quota_exceeded — fail
// over to the route's next target, count against the breaker, and hide the
// account's text from tenants — not the caller's bad_request that stops the
// job on the first target.
func TestAnthropicSpendLimit400IsQuota(t *testing.T) {
	msgs := []string{
		"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.",
		"You have reached your specified workspace API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.",
	}
	for _, msg := range msgs {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: msg}))
		for _, stream := range []bool{false, true} {
			_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != KindQuotaExceeded || e.Action != ActionFailover || e.Fault != FaultRouter {
				t.Errorf("stream=%v %q: %s/%s/%s, want quota_exceeded/failover/router (the router's own spend limit, not the caller's request)",
					stream, msg[:48], e.Kind, e.Action, e.Fault)
			}
			if strings.Contains(e.Message, "regain access") {
				t.Errorf("stream=%v: the tenant reads the router's account text %q", stream, e.Message)
			}
		}
	}
}

// The workspace's customer-managed encryption key disabled, or blocked by
// the KMS's network rules, is answered with HTTP 400 invalid_request_error
// and error.details.error_code cmek_key_disabled / cmek_key_network_blocked
// (Anthropic's "Troubleshoot CMEK": "This 400 error means your key
// management service refused Anthropic's call"). Every request to the
// target fails until an operator fixes the key: the router's own account
// (fail over, count against the breaker), not the caller's bad_request that
// stops the job.
func TestAnthropicCMEK400IsTheRoutersAccount(t *testing.T) {
	cases := []struct{ code, msg string }{
		{"cmek_key_disabled", "Customer-managed encryption key is disabled or revoked. Re-enable the key to restore access."},
		{"cmek_key_network_blocked", "The request to your key management service was blocked by its network access controls (for example, a KMS firewall or IP allowlist)."},
	}
	for _, c := range cases {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorCode: c.code, ErrorMessage: c.msg}))
		_, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Action != ActionFailover || e.Fault != FaultRouter {
			t.Errorf("%s: %s/%s/%s, want the router's own account (fault router, fail over)", c.code, e.Kind, e.Action, e.Fault)
		}
	}
}

// The spend-limit wording is matched by its words, whatever their case and
// spacing (a proxy rewraps it), in an error event inside a stream too, and
// through Anthropic's OpenAI-compatible endpoint; the router's log keeps
// Anthropic's text. A caller's plain bad request stays bad_request.
func TestAnthropicSpendLimitWordings(t *testing.T) {
	msgs := []string{
		"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.",
		"You have reached your specified workspace API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.",
		"you have reached your specified\n    API Usage Limits. You will regain access on 2026-04-01 at 00:00 UTC.",
	}
	for _, msg := range msgs {
		for _, status := range []int{400, 0} {
			e := classifyAnthropicAPI("claude", status, "invalid_request_error", "", msg, nil)
			if e.Kind != KindQuotaExceeded || e.Fault != FaultRouter || e.Action != ActionFailover {
				t.Errorf("status %d %q: %s/%s/%s, want quota_exceeded/router/failover", status, msg[:40], e.Kind, e.Fault, e.Action)
			}
			if e.Message != operatorsMessages[KindQuotaExceeded] || e.ProviderMessage != msg {
				t.Errorf("status %d: message %q, provider message %q: want the router's message, Anthropic's in the log", status, e.Message, e.ProviderMessage)
			}
		}
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."}}`)
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindQuotaExceeded || e.Action != ActionFailover {
		t.Errorf("OpenAI-compatible endpoint: %s/%s, want quota_exceeded/failover", e.Kind, e.Action)
	}
	if e := classifyAnthropicAPI("claude", 400, "invalid_request_error", "", "max_tokens: Field required", nil); e.Kind != KindBadRequest || e.Action != ActionStop {
		t.Errorf("a plain invalid request: %s/%s, want bad_request/stop", e.Kind, e.Action)
	}
}

// The CMEK refusals are misconfigured (the operator's key setup, not its
// credentials), their text kept for the router's log and the tenant told the
// target's key failed; organization_on_hold (Anthropic disabled the
// organization for trust and safety reasons) is auth, as "This organization
// has been disabled." is. All fail over and count against the breaker.
func TestAnthropicAccountErrorCodes(t *testing.T) {
	cases := []struct {
		code, msg string
		kind      Kind
	}{
		{"cmek_key_disabled", "Customer-managed encryption key is disabled or revoked. Re-enable the key to restore access.", KindMisconfigured},
		{"cmek_key_network_blocked", "The request to your key management service was blocked by its network access controls (for example, a KMS firewall or IP allowlist).", KindMisconfigured},
		{"organization_on_hold", "Your organization is on hold.", KindAuth},
	}
	for _, c := range cases {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorCode: c.code, ErrorMessage: c.msg}))
		for _, stream := range []bool{false, true} {
			_, err := newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = stream }).Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || e.Fault != FaultRouter || e.Action != ActionFailover || e.Code != c.code {
				t.Errorf("%s stream=%v: %s/%s/%s code %q, want %s/router/failover", c.code, stream, e.Kind, e.Fault, e.Action, e.Code, c.kind)
			}
			if e.Message == c.msg || e.ProviderMessage != c.msg {
				t.Errorf("%s stream=%v: message %q, provider message %q: want the router's message, Anthropic's in the log", c.code, stream, e.Message, e.ProviderMessage)
			}
			if c.kind == KindMisconfigured && !strings.Contains(e.Message, "encryption key") {
				t.Errorf("%s: message %q does not say what the operator must fix", c.code, e.Message)
			}
		}
	}
}
