package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// response_format json_schema is sent as output_config.format with the
// caller's schema as it is. OpenAI takes any schema when strict is false (and
// the router validates the answer itself), but Anthropic's structured outputs
// refuse keywords they do not support (minimum, maxLength, ...), objects
// without additionalProperties false, and models without the feature refuse
// the field. The 400 was classified as the caller's bad request with action
// stop: the job ended although the route's OpenAI-compatible target would
// answer it. It stays the request's bad_request (the target's breaker does
// not count it) and fails over, streamed or not; another bad request still
// stops. Found by review.
func TestAnthropicOutputFormatRefusalFailsOver(t *testing.T) {
	refusals := []string{
		"output_config.format.schema: For 'integer' type, property 'minimum' is not supported",
		"output_config.format: Extra inputs are not permitted",
		"output_format.schema: Invalid schema: recursive schemas are not supported",
	}
	for _, msg := range refusals {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				var body map[string]any
				_ = json.NewDecoder(r.Body).Decode(&body)
				if _, ok := body["output_config"]; ok {
					anthReal400(w, msg)
					return
				}
				anthOK(w)
			})
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			req := testRequest()
			req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "n",
				Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)}
			_, err := p.Complete(context.Background(), req)
			e := mustError(t, err)
			if e.Kind != KindBadRequest || e.Fault != FaultCaller || e.Action != ActionFailover || e.Message != msg {
				t.Errorf("%q stream=%v: %s fault %s action %s message %q, want bad_request, caller, failover with Anthropic's message",
					msg, stream, e.Kind, e.Fault, e.Action, e.Message)
			}
		}
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { anthReal400(w, "messages.0.content: Field required") })
	_, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindBadRequest || e.Action != ActionStop {
		t.Errorf("another bad request: %s action %s, want bad_request, stop", e.Kind, e.Action)
	}
}
