package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// The provider's usage details (cached prompt tokens, reasoning tokens) and
// its system_fingerprint were dropped from the answer; they are carried on
// the Response now, plain and streamed. Found by review.
func TestOpenAICarriesUsageDetailsAndSystemFingerprint(t *testing.T) {
	const usage = `"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,` +
		`"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":3}}`
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test","system_fingerprint":"fp_1",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` + usage + `}`))
			return
		}
		startStream(w)
		sse(w, `{"id":"c","model":"gpt-test","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`,
			`{"id":"c","model":"gpt-test","system_fingerprint":"fp_1","choices":[],`+usage+`}`, `[DONE]`)
	})
	p := newTestAdapter(t, srv.URL, nil)
	want := Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16,
		PromptTokensDetails: PromptTokensDetails{CachedTokens: 8}, CompletionTokensDetails: CompletionTokensDetails{ReasoningTokens: 3}}
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
		if resp.Usage != want || resp.SystemFingerprint != "fp_1" {
			t.Errorf("stream %v: usage %+v fingerprint %q, want %+v and fp_1", stream, resp.Usage, resp.SystemFingerprint, want)
		}
	}
}
