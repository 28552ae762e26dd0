package providers

import (
	"context"
	"net/http"
	"testing"
)

const billedUsageJSON = `{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}`

// An OpenAI answer the adapter fails although it is complete (withheld by the
// content filter, refused, without choices) was billed: its error carries the
// usage, id and model the provider reported, on both API paths, so that the
// attempt records its tokens and cost.
func TestBilledFailOpenAICarriesUsage(t *testing.T) {
	want := Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}
	rows := []struct {
		name, code string
		kind       Kind
		body       string   // the non-streamed answer
		chunks     []string // the streamed one (nil: no such stream)
	}{
		{"content filter", "content_filter", KindContentPolicy,
			`{"id":"chatcmpl-b1","object":"chat.completion","created":1,"model":"gpt-billed","choices":[{"index":0,"message":{"role":"assistant","content":"partial"},"finish_reason":"content_filter"}],"usage":` + billedUsageJSON + `}`,
			[]string{
				`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":"content_filter"}]}`,
				`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[],"usage":` + billedUsageJSON + `}`,
			}},
		{"refusal", "refusal", KindContentPolicy,
			`{"id":"chatcmpl-b1","object":"chat.completion","created":1,"model":"gpt-billed","choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":"I can't help with that."},"finish_reason":"stop"}],"usage":` + billedUsageJSON + `}`,
			[]string{
				`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
				`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[],"usage":` + billedUsageJSON + `}`,
			}},
		{"no choices", "", KindEmptyResponse,
			`{"id":"chatcmpl-b1","object":"chat.completion","created":1,"model":"gpt-billed","choices":[],"usage":` + billedUsageJSON + `}`,
			nil},
	}
	for _, r := range rows {
		t.Run(r.name+"/complete", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(r.body))
			})
			resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			if resp != nil {
				t.Fatalf("returned a response: %+v", resp)
			}
			e := mustError(t, err)
			if e.Kind != r.kind || e.Code != r.code {
				t.Fatalf("kind %s code %q, want %s %q", e.Kind, e.Code, r.kind, r.code)
			}
			assertBilled(t, e, want, "chatcmpl-b1", "gpt-billed")
		})
		if r.chunks == nil {
			continue
		}
		t.Run(r.name+"/stream", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, append(r.chunks, "[DONE]")...)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if resp != nil {
				t.Fatalf("returned a response: %+v", resp)
			}
			e := mustError(t, err)
			if e.Kind != r.kind || e.Code != r.code {
				t.Fatalf("kind %s code %q, want %s %q", e.Kind, e.Code, r.kind, r.code)
			}
			assertBilled(t, e, want, "chatcmpl-b1", "gpt-billed")
		})
	}
	// A failure whose answer reported no usage has none: the attempt then
	// records no usage, as for a failure without an answer.
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"chatcmpl-b2","object":"chat.completion","created":1,"model":"gpt-billed","choices":[]}`))
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Usage != nil {
		t.Fatalf("usage %+v from an answer that reported none", *e.Usage)
	}
}
