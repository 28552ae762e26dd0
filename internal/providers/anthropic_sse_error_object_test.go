package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A gateway in front of the Messages API that labels its answer to a
// streamed call text/event-stream before it knows the upstream's outcome, and
// then writes Anthropic's error object as the body, is documented ("HTTP 200
// … whose body is Anthropic's error object … to a streamed call or not:
// classified by the error's type and message") and handled so by the
// OpenAI-compatible adapter whatever the Content-Type. The Anthropic adapter
// did not look at a body labelled text/event-stream: it was a stream cut
// after 0 events — failed over instead of retried, counted against the
// breaker, and, with no usage and not AnsweredWithError, its prompt estimated
// as billed. Found by review (ranth10).
func TestAnthropicAnsweredErrorObjectLabelledSSE(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`))
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	pe, _ := AsError(err)
	if pe == nil || pe.Kind != KindRateLimited || !pe.AnsweredWithError || pe.Usage != nil {
		t.Fatalf("got %v, want rate_limited from the error object, answered with error, no usage", err)
	}
	if !strings.Contains(pe.Message, "HTTP 200 answered with an error object") {
		t.Errorf("message %q", pe.Message)
	}
}

// The same gateway answering with the whole message (its upstream ignored
// stream:true) under text/event-stream: the answer is read as the whole
// message it is, as under any other Content-Type, not cut after 0 events.
func TestAnthropicWholeMessageLabelledSSE(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}`))
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("whole message labelled text/event-stream: %v", err)
	}
	if resp.Content != "done" || resp.Usage.PromptTokens != 5 || resp.Usage.CompletionTokens != 1 {
		t.Fatalf("got %q %+v, want done, 5+1 tokens", resp.Content, resp.Usage)
	}
}
