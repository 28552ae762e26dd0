package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A streamed tool-call index that is negative or absurd is the provider's
// error (stream_malformed), never a panic or an allocation without end.
func TestOpenAIStreamBadToolCallIndex(t *testing.T) {
	for _, idx := range []string{"-1", "-9223372036854775808", "128", "2147483647", "9223372036854775807"} {
		t.Run(idx, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startStream(w)
				sse(w,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":`+idx+`,"id":"call_9","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
					`[DONE]`)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), toolRequest(), nil)
			if resp != nil {
				t.Fatalf("a response from a stream with tool call index %s", idx)
			}
			e := assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
			if !strings.Contains(e.Message, "tool call index") {
				t.Fatalf("message %q does not name the tool call index", e.Message)
			}
		})
	}
}

// A body or a stream larger than MaxResponseBytes fails the call with
// response_too_large (fail over), for plain and streamed calls (an error
// body past it is classified by its status); an answer of exactly the limit
// is read whole.
func TestOpenAIResponseBound(t *testing.T) {
	const limit = 4096
	big := strings.Repeat("x", 2*limit)
	t.Run("plain body", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, big)
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = limit })
		resp, err := p.Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatal("an over-limit body returned a response")
		}
		assertKind(t, err, KindResponseTooLarge, FaultProvider, ActionFailover, false)
	})
	t.Run("error body", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 500, nil, apiErrorBody(big, "server_error", nil, nil))
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = limit })
		_, err := p.Complete(context.Background(), testRequest())
		// Classified by its status, not as an answer too large
		// (oversized_error_body_test.go).
		if e := assertKind(t, err, KindServerError, FaultProvider, ActionRetry, false); e.StatusCode != 500 || e.Received {
			t.Fatalf("HTTP %d received %v, want HTTP 500 not received", e.StatusCode, e.Received)
		}
	})
	t.Run("stream", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w)
			for i := 0; i < 2*limit/64; i++ {
				sse(w, chunk(strings.Repeat("y", 64), ""))
			}
			sse(w, chunk("", "stop"), "[DONE]")
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = limit })
		resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatal("an over-limit stream returned a response")
		}
		assertKind(t, err, KindResponseTooLarge, FaultProvider, ActionFailover, false)
	})
	t.Run("exactly the limit", func(t *testing.T) {
		body := []byte(completionBody)
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = int64(len(body)) })
		if _, err := p.Complete(context.Background(), testRequest()); err != nil {
			t.Fatalf("a body of exactly the limit: %v", err)
		}
	})
	t.Run("negative limit refused", func(t *testing.T) {
		if _, err := NewOpenAI(OpenAIConfig{Name: "x", BaseURL: "http://127.0.0.1:1/v1", MaxResponseBytes: -1}); err == nil {
			t.Fatal("a negative MaxResponseBytes was accepted")
		}
	})
}
