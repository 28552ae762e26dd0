package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A stream broken after message_start returned an error without usage,
// though Anthropic had reported the exact input and cache tokens it billed:
// the race then estimated the prompt with an OpenAI tokenizer. The error
// carries the reported usage now, whether the body ends early or an error
// event (overloaded_error) breaks the stream. Found by review.
func TestAnthropicStreamCutKeepsReportedUsage(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_cut","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5000,"cache_read_input_tokens":20000,"cache_creation_input_tokens":0,"output_tokens":1}}}`
	text := []string{
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	}
	cases := map[string][]string{
		"body ends":      append([]string{start}, text...),
		"overloaded":     append(append([]string{start}, text...), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		"message_delta":  append(append([]string{start}, text...), `{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":9}}`),
		"no start event": text,
	}
	for name, evs := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { anthSSE(w, evs...) }))
			defer srv.Close()
			_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if name == "no start event" {
				if e.Usage != nil {
					t.Errorf("usage %+v with no message_start: want none (nothing was reported)", *e.Usage)
				}
				return
			}
			if e.Usage == nil {
				t.Fatalf("%s (%s): usage nil, want the usage message_start reported", e.Kind, e.Message)
			}
			wantOut := 1
			if name == "message_delta" {
				wantOut = 9
			}
			if e.Usage.PromptTokens != 25000 || e.Usage.CompletionTokens != wantOut {
				t.Errorf("usage %+v, want 25000 prompt tokens (5000 input + 20000 cache reads), %d completion", *e.Usage, wantOut)
			}
			if e.ResponseID != "msg_cut" || !e.Received {
				t.Errorf("response id %q received %v", e.ResponseID, e.Received)
			}
		})
	}
}
