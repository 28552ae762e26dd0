package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A 4xx the taxonomy does not list (405, 410, 415, 421, 451: what a proxy, a
// wrong base_url or a redirect followed as a GET answers) is the target's
// misconfiguration: the router fails over, and the message names the status.
// It used to be bad_request, the caller's fault, which stopped every job of
// the route at that target. Found by review.
func TestUnlistedClientStatusIsMisconfigured(t *testing.T) {
	for _, status := range []int{405, 410, 415, 421, 451} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			fmt.Fprintf(w, "<html><body><h1>%d %s</h1>nginx</body></html>", status, http.StatusText(status))
		})
		for _, stream := range []bool{false, true} {
			for adapter, p := range map[string]Provider{
				"openai":    newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = stream }),
				"anthropic": newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }),
			} {
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindMisconfigured || e.Fault != FaultRouter || e.Action != ActionFailover || e.StatusCode != status {
					t.Errorf("%s HTTP %d stream=%v: %s/%s/%s status %d, want misconfigured/router/failover", adapter, status, stream, e.Kind, e.Fault, e.Action, e.StatusCode)
				}
				if want := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)); !strings.Contains(e.Message, want) || !strings.Contains(e.Message, "base_url") {
					t.Errorf("%s HTTP %d stream=%v: message %q does not name %q and what to check", adapter, status, stream, e.Message, want)
				}
			}
		}
	}
}

// The statuses that do say the request is wrong (400, 413, 422) stay the
// caller's, split by the provider's message as before.
func TestRequestStatusesStayTheCallers(t *testing.T) {
	for _, c := range []struct {
		status int
		msg    string
		kind   Kind
	}{
		{400, "bad parameter", KindBadRequest},
		{413, "request too large", KindBadRequest},
		{422, "unprocessable", KindBadRequest},
		{400, "This model's maximum context length is 8192 tokens", KindContextLength},
	} {
		if e := ClassifyStatus("p", c.status, "", c.msg); e.Kind != c.kind || e.Fault != FaultCaller {
			t.Errorf("HTTP %d %q: %s/%s, want %s/caller", c.status, c.msg, e.Kind, e.Fault, c.kind)
		}
	}
}

// An Anthropic-shaped error body with type invalid_request_error under a
// status that does not say the request is wrong (a proxy's 405) is
// classified by the status; under a 400, or in a stream, by its message.
func TestAnthropicInvalidRequestTypeFollowsTheStatus(t *testing.T) {
	if e := classifyAnthropicAPI("c", 405, "invalid_request_error", "", "Method Not Allowed", nil); e.Kind != KindMisconfigured {
		t.Errorf("405 invalid_request_error: %s, want misconfigured", e.Kind)
	}
	for _, status := range []int{0, 400, 413} {
		if e := classifyAnthropicAPI("c", status, "invalid_request_error", "", "bad", nil); e.Kind != KindBadRequest {
			t.Errorf("%d invalid_request_error: %s, want bad_request", status, e.Kind)
		}
	}
}
