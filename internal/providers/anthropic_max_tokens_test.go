package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// modelOutputLimitServer refuses max_tokens above 64000 as Anthropic does.
func modelOutputLimitServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.MaxTokens > 64000 {
			anthReal400(w, fmt.Sprintf("max_tokens: %d > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929", body.MaxTokens))
			return
		}
		anthOK(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A request without max_tokens is sent providers[].max_tokens, the
// operator's; one above the model's output limit was refused by Anthropic
// with a 400 classified bad_request/caller/stop, failing the job for the
// router's own setting. It is misconfigured now (fails over) and names the
// setting. When the caller set max_tokens, the refusal stays the caller's.
// Found by review.
func TestAnthropicConfiguredMaxTokensAboveModelLimitIsMisconfigured(t *testing.T) {
	srv := modelOutputLimitServer(t)
	for _, stream := range []bool{false, true} {
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.MaxTokens = 100000; c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind == KindBadRequest || e.Action == ActionStop || e.Fault == FaultCaller {
			t.Errorf("stream=%v: %s/%s/%s, want the router's configuration, failed over", stream, e.Kind, e.Fault, e.Action)
		}
		if e.Kind != KindMisconfigured || e.StatusCode != 400 {
			t.Errorf("stream=%v: kind %s status %d, want misconfigured, 400", stream, e.Kind, e.StatusCode)
		}
		if !strings.Contains(e.Message, "providers[].max_tokens") || !strings.Contains(e.Message, "100000") || !strings.Contains(e.Message, "64000") {
			t.Errorf("stream=%v: message %q, want it to name providers[].max_tokens, its value and the model's limit", stream, e.Message)
		}

		req := testRequest()
		req.MaxTokens = 100000
		_, err = p.Complete(context.Background(), req)
		if e := mustError(t, err); e.Kind != KindBadRequest || e.Action != ActionStop {
			t.Errorf("stream=%v: the caller's own max_tokens refused: %s/%s, want bad_request/stop", stream, e.Kind, e.Action)
		}
	}
}
