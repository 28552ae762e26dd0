package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// openRouterModeration is OpenRouter's documented moderation refusal: HTTP
// 403, with error.code 403 and error.metadata (ModerationErrorMetadata).
const openRouterModeration = `{"error":{"code":403,"message":"Your chosen model requires moderation and your input was flagged for \"violence\"",` +
	`"metadata":{"reasons":["violence"],"flagged_input":"...","provider_name":"OpenAI","model_slug":"openai/gpt-4o"}}}`

// A 403 moderation refusal (OpenRouter's) is the caller's content, not the
// router's credentials: content_policy, the caller's fault (a success of the
// target's breaker), stopped unless the route fails over on content policy,
// with the provider's message — streamed or not (found by review: it was auth,
// counted against the breaker, failed over to every target, and shown to the
// tenant as the router's credentials refused).
func TestModeration403IsTheCallersContentPolicy(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 403, nil, openRouterModeration) })
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindContentPolicy || e.Fault != FaultCaller || e.Action != ActionStop {
			t.Errorf("stream=%v: a 403 moderation refusal of the caller's input is %s/%s/%s (%q), want content_policy/caller/stop",
				stream, e.Kind, e.Fault, e.Action, e.Message)
		}
		if e.StatusCode != 403 || !strings.Contains(e.Message, "input was flagged") || e.ProviderMessage != "" {
			t.Errorf("stream=%v: status %d, message %q (provider message %q): want 403 and the provider's own message",
				stream, e.StatusCode, e.Message, e.ProviderMessage)
		}
	}
}

// The same refusal as an error event inside a 200 stream ({"error": {"code":
// 403, …}}, OpenRouter's in-stream form) is content_policy too, not a server
// error retried on the same target.
func TestModeration403InStreamIsContentPolicy(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, openRouterModeration)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindContentPolicy || e.Fault != FaultCaller || e.Action != ActionStop {
		t.Fatalf("an in-stream moderation refusal is %s/%s/%s (%q), want content_policy/caller/stop", e.Kind, e.Fault, e.Action, e.Message)
	}
}

// A content-policy code on a 403 is content_policy whatever the message says.
func TestModeration403ByCode(t *testing.T) {
	for _, code := range []string{"content_policy_violation", "content_filter"} {
		if e := ClassifyStatus("p", 403, code, "Forbidden"); e.Kind != KindContentPolicy || e.Fault != FaultCaller {
			t.Errorf("403 code %s is %s/%s, want content_policy/caller", code, e.Kind, e.Fault)
		}
	}
}

// Every other 403 stays a refused credential: the router's, failed over,
// counted against the breaker, its message hidden from the tenant — also one
// that says "flagged" or "moderation" about the account rather than the input.
func TestOrdinary403StaysAuth(t *testing.T) {
	rows := []struct{ code, msg string }{
		{"", "Forbidden"},
		{"", ""},
		{"invalid_api_key", "Invalid API key provided"},
		{"", "invalid api key"},
		{"model_not_found", "Project does not have access to model gpt-test"},
		{"unsupported_country_region_territory", "Country, region, or territory not supported"},
		{"", "Your account has been flagged for suspicious activity"},
		{"", "This API key was flagged and has been disabled"},
		{"", "Key is under moderation review"},
		{"403", "Access denied"},
	}
	for _, r := range rows {
		e := ClassifyStatus("p", 403, r.code, r.msg)
		if e.Kind != KindAuth || e.Fault != FaultRouter || e.Action != ActionFailover || e.Message != operatorsMessages[KindAuth] {
			t.Errorf("403 %q %q is %s/%s/%s (%q), want auth/router/failover with the credentials message", r.code, r.msg, e.Kind, e.Fault, e.Action, e.Message)
		}
	}
	// Through the adapter, streamed or not.
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, 403, nil, apiErrorBody("Forbidden", "invalid_request_error", nil, "forbidden"))
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.Kind != KindAuth || e.Fault != FaultRouter {
			t.Errorf("stream=%v: a 403 Forbidden is %s/%s, want auth/router", stream, e.Kind, e.Fault)
		}
	}
	// A 401 is the credentials whatever it says.
	if e := ClassifyStatus("p", 401, "", "Your chosen model requires moderation and your input was flagged"); e.Kind != KindAuth {
		t.Errorf("401 is %s, want auth", e.Kind)
	}
}
