package providers

import (
	"context"
	"net/http"
	"testing"
)

// SPEC §6.2 and docs/race.md: "A 400 (bad request, context length, content
// policy) is never retried on the same model." The OpenAI-compatible adapter
// classifies every 400 by its status first (statusKind: bad_request, stop,
// the caller's; only a rate-limit code is the documented exception). The
// Anthropic adapter takes error.type at its word whatever the status: a 400
// whose type is api_error, overloaded_error or timeout_error (a gateway's or
// an Anthropic-compatible server's wording for a request it refused) is a
// server failure, retried on the same model and counted against the
// target's breaker for every tenant.
// Found by review (ranth13).
func TestAnthropic400WithServerErrorTypeNotRetried(t *testing.T) {
	for _, typ := range []string{"api_error", "overloaded_error", "timeout_error"} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, 400, nil, `{"type":"error","error":{"type":"`+typ+`","message":"messages.0.content: invalid value"}}`)
		})
		_, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		pe, _ := AsError(err)
		if pe == nil {
			t.Fatalf("%s: no *Error: %v", typ, err)
		}
		if pe.Action == ActionRetry || pe.Fault == FaultProvider && pe.Kind != KindBadRequest {
			t.Errorf("HTTP 400 %s: kind %s, action %s, fault %s; want a 400 never retried on the same model (SPEC §6.2), as the OpenAI-compatible adapter classifies it",
				typ, pe.Kind, pe.Action, pe.Fault)
		}
	}
	// The OpenAI-compatible adapter, for comparison.
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, 400, nil, `{"error":{"type":"server_error","message":"messages.0.content: invalid value"}}`)
	})
	o, err := NewOpenAI(OpenAIConfig{Name: "oai", BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Complete(context.Background(), testRequest())
	if pe, ok := AsError(err); ok {
		t.Logf("OpenAI-compatible adapter, HTTP 400 type server_error: kind %s, action %s, fault %s", pe.Kind, pe.Action, pe.Fault)
	}
}
