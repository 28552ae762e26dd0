package providers

import (
	"context"
	"net/http"
	"testing"
)

// A target that cannot take a feature of the request (tools, a JSON schema)
// says so with 400. It stopped the job as the caller's bad request, though
// another target of the route may take it. It stays the request's
// (bad_request, the caller's fault: a breaker success) and fails over, as a
// parameter a reasoning model cannot take does. Found by review.
func TestUnsupportedFeatureFailsOver(t *testing.T) {
	bodies := []string{
		`{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`,
		`{"error":{"message":"\"registry.ollama.ai/library/llama3:latest\" does not support thinking"}}`,
		`{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`,
		`{"object":"error","message":"tool_choice = \"required\" is not supported!","type":"BadRequestError","param":null,"code":400}`,
		`{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. Learn more about supported models at the Structured Outputs guide: https://platform.openai.com/docs/guides/structured-outputs","type":"invalid_request_error","param":null,"code":null}}`,
		`{"error":{"message":"Unsupported value: 'messages[0].role' does not support 'system' with this model.","type":"invalid_request_error","param":"messages[0].role","code":"unsupported_value"}}`,
	}
	for _, body := range bodies {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusBadRequest, nil, body) })
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := assertKind(t, err, KindBadRequest, FaultCaller, ActionFailover, false)
			if e.Message == "" || e.Received {
				t.Errorf("%.50s… stream=%v: message %q received %v", body, stream, e.Message, e.Received)
			}
		}
	}
	// A bad request that does not say the target lacks a feature still stops.
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusBadRequest, nil, apiErrorBody("Invalid 'messages[1].content': string too long.", "invalid_request_error", nil, nil))
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
}
