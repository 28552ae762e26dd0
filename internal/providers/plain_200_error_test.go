package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A 200 whose JSON body is an error object ({"error": {...}}, no choices)
// is the provider refusing the request, as an error event in a 200 stream
// is: classified by what it says and marked AnsweredWithError, not an
// empty_response the race takes for a billed, cut answer.
func TestOpenAIPlain200ErrorObject(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 200, nil, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindRateLimited || !e.AnsweredWithError {
			t.Errorf("stream=%v: got %s/%s answeredWithError=%v received=%v msg %q; want rate_limited, AnsweredWithError",
				stream, e.Kind, e.Action, e.AnsweredWithError, e.Received, e.Message)
		}
	}
}

// The provider's own verdict decides: a context-length refusal sent with
// HTTP 200 is the caller's (context_length, not a failover counted against
// the target), its message kept; a body with "error": null and no choices
// is still an answer without choices (empty_response); vLLM's error object
// ({"object": "error", ...}) is read too. Streamed or not, and whether the
// body ends with a newline or not (go-openai reads a stream's last line
// differently).
func TestOpenAIPlain200ErrorVerdicts(t *testing.T) {
	for _, c := range []struct {
		name, body string
		kind       Kind
		fault      Fault
		answered   bool
		msg        string
	}{
		{"context length", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			KindContextLength, FaultCaller, true, "maximum context length"},
		{"vLLM object", `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`,
			KindContextLength, FaultCaller, true, "maximum context length"},
		{"server error", `{"error":{"message":"upstream exploded","type":"server_error","code":null}}`,
			KindServerError, FaultProvider, true, "upstream exploded"},
		{"null error", `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[],"error":null}`,
			KindEmptyResponse, FaultProvider, false, "no choices"},
	} {
		for _, stream := range []bool{false, true} {
			for _, nl := range []string{"", "\n"} {
				srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, 200, nil, c.body+nl) })
				p := newTestAdapter(t, srv.URL, func(o *OpenAIConfig) { o.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != c.kind || e.Fault != c.fault || e.AnsweredWithError != c.answered || !e.Received ||
					!strings.Contains(e.Message, c.msg) {
					t.Errorf("%s stream=%v newline=%v: got %s/%s answeredWithError=%v received=%v msg %q; want %s/%s answeredWithError=%v, received, message with %q",
						c.name, stream, nl != "", e.Kind, e.Fault, e.AnsweredWithError, e.Received, e.Message, c.kind, c.fault, c.answered, c.msg)
				}
			}
		}
	}
}
