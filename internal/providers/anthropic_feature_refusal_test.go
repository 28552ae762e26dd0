package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Anthropic refuses a strict tool whose schema uses a keyword its strict
// tool use does not support (OpenAI's strict mode takes minimum, maxItems…),
// a forced tool_choice on a model without it, and a prefill on a model
// without prefill, with 400 invalid_request_error. Like an output_config
// schema it refuses (outputFormatRefused) or a feature the model lacks
// (featureUnsupported), that is not a request the route's other targets
// would refuse: it fails over, still the request's bad_request (the
// target's breaker does not count it), rather than stopping the job.
// Found by review.
func TestAnthropicToolFeatureRefusalFailsOver(t *testing.T) {
	for _, msg := range []string{
		"tools.0.custom: For 'array' type, property 'maxItems' is not supported",
		"tools.25.custom: For 'integer' type, properties maximum, minimum are not supported",
		"tools.3.custom.input_schema: For 'string' type, property 'maxLength' is not supported",
		`tool_choice: type "tool" and "any" are not supported for this model.`,
		"This model does not support assistant message prefill. The conversation must end with a user message.",
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthReal400(w, msg) })
		p := newAnthropicAdapter(t, srv.URL, nil)
		req := testRequest()
		req.Tools = json.RawMessage(`[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{"xs":{"type":"array","maxItems":3,"items":{"type":"string"}}},"required":["xs"],"additionalProperties":false}}}]`)
		req.ToolChoice = json.RawMessage(`"required"`)
		_, err := p.Complete(context.Background(), req)
		pe, ok := AsError(err)
		if !ok || pe.Kind != KindBadRequest || pe.Fault != FaultCaller || pe.Action != ActionFailover {
			t.Errorf("%q: got %v, want a bad_request (the caller's) failed over", msg, err)
		}
	}
}

// The match is narrow: a refusal of something the caller got wrong in a
// tool or tool_choice — which every target refuses — still stops the job.
func TestAnthropicToolMistakeStillStops(t *testing.T) {
	for _, msg := range []string{
		"tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
		"tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
		"tool_choice.tool.name: Field required",
		"messages: final assistant content cannot end with trailing whitespace",
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthReal400(w, msg) })
		p := newAnthropicAdapter(t, srv.URL, nil)
		_, err := p.Complete(context.Background(), testRequest())
		pe, ok := AsError(err)
		if !ok || pe.Kind != KindBadRequest || pe.Action != ActionStop {
			t.Errorf("%q: got %v, want a bad_request that stops", msg, err)
		}
	}
}
