package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Groq answers a model's malformed tool call or JSON with 400
// invalid_request_error, code tool_use_failed or json_validate_failed (and
// with the same error inside a 200 stream): the model generated, and the
// provider billed, an answer it could not parse. It was a bad request — the
// caller's fault, the race stopped, no failover — and the streamed case was
// marked an error in place of the answer, so nothing was estimated as billed.
// It is the provider's now: malformed_response, failed over, received, with
// the provider's code and message. Found by review.
func TestFailedGenerationIsTheProviders(t *testing.T) {
	bodies := map[string]string{
		"tool_use_failed":      `{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=get_weather{\"city\": \"Paris\"}</function>"}}`,
		"json_validate_failed": `{"error":{"message":"Failed to generate JSON. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"json_validate_failed","failed_generation":"{\"a\": "}}`,
		// A gateway that drops the code: known by the message's opening words.
		"": `{"error":{"message":"Failed to call a function. Please adjust your prompt.","type":"invalid_request_error"}}`,
	}
	for code, body := range bodies {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if stream {
					startStream(w)
					fmt.Fprintf(w, "data: %s\n\n", body)
					return
				}
				writeError(w, http.StatusBadRequest, nil, body)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
			want := code
			if want == "" {
				want = "invalid_request_error" // the type, as for any error without a code
			}
			if !e.Received || e.AnsweredWithError || e.Code != want || !strings.Contains(e.Message, "Failed to ") {
				t.Errorf("%q stream=%v: received %v answered-with-error %v code %q message %q", code, stream, e.Received, e.AnsweredWithError, e.Code, e.Message)
			}
		}
	}
}

// The classification itself, for both adapters' paths: an error status, an
// error event without a status, and Anthropic's invalid_request_error path.
func TestFailedGenerationClassification(t *testing.T) {
	for _, c := range []struct{ status int }{{400}, {422}, {0}} {
		e := classifyHTTP("groq", c.status, "tool_use_failed", "invalid_request_error", "Failed to call a function.")
		if e.Kind != KindMalformedResponse || !e.Received {
			t.Errorf("status %d: kind %s received %v", c.status, e.Kind, e.Received)
		}
	}
	e := classifyAnthropicAPI("claude", 400, "invalid_request_error", "", "Failed to generate JSON. Please adjust your prompt.", nil)
	if e.Kind != KindMalformedResponse || !e.Received {
		t.Errorf("anthropic path: kind %s received %v", e.Kind, e.Received)
	}
	// A message that only mentions failing stays a bad request.
	if e := classifyHTTP("groq", 400, "", "invalid_request_error", "messages: the tool call failed to validate"); e.Kind != KindBadRequest || e.Received {
		t.Errorf("plain bad request: kind %s received %v", e.Kind, e.Received)
	}
}
