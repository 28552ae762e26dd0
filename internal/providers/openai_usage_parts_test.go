package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// A usage's parts agree with each other as docs/providers.md ("Cost") says
// they do, through the OpenAI-compatible adapter, plain and streamed:
// cached_tokens is part of prompt_tokens, so a gateway's cached_tokens of
// 4294967295 beside prompt_tokens 20 is held to 20 (as anthropicUsage holds
// cache reads to the prompt), and a total_tokens smaller than prompt_tokens
// and completion_tokens together becomes their sum (the split is what is
// priced). Found by review (rtok13, wanth60): both reached the chat caller's
// usage and the attempt as reported.
func TestOpenAIUsagePartsAddUp(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        Usage
	}{
		{"cached over prompt",
			`"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23,"prompt_tokens_details":{"cached_tokens":4294967295}}`,
			Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23, PromptTokensDetails: PromptTokensDetails{CachedTokens: 20}}},
		{"cached within prompt",
			`"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23,"prompt_tokens_details":{"cached_tokens":16}}`,
			Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23, PromptTokensDetails: PromptTokensDetails{CachedTokens: 16}}},
		{"total under its split",
			`"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":50}`,
			Usage{PromptTokens: 1000, CompletionTokens: 50, TotalTokens: 1050}},
		{"total over its split (kept: the race prices the gap)",
			`"usage":{"prompt_tokens":20,"completion_tokens":198,"total_tokens":623}`,
			Usage{PromptTokens: 20, CompletionTokens: 198, TotalTokens: 623}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if !bytes.Contains(body, []byte(`"stream":true`)) {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test",` +
						`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` + c.usage + `}`))
					return
				}
				startStream(w)
				sse(w, `{"id":"c","model":"gpt-test","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`,
					`{"id":"c","model":"gpt-test","choices":[],`+c.usage+`}`, `[DONE]`)
			})
			p := newTestAdapter(t, srv.URL, nil)
			for _, stream := range []bool{false, true} {
				var resp *Response
				var err error
				if stream {
					resp, err = p.CompleteStream(context.Background(), testRequest(), nil)
				} else {
					resp, err = p.Complete(context.Background(), testRequest())
				}
				if err != nil {
					t.Fatalf("stream %v: %v", stream, err)
				}
				if resp.Usage != c.want {
					t.Errorf("stream %v: usage %+v, want %+v", stream, resp.Usage, c.want)
				}
			}
		})
	}
}
