package providers

import (
	"context"
	"net/http"
	"testing"
)

// A usage count written as a JSON float (10.0) or past int64 must not
// discard a whole, valid answer: usage is clamped (reportedUsage), the
// answer is kept.
func TestOpenAIFloatUsageKeepsAnswer(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 200, nil, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10.0,"completion_tokens":3,"total_tokens":13}}`)
	})
	resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if err != nil || resp.Content != "{}" {
		t.Fatalf("a valid answer with usage prompt_tokens 10.0 was discarded: %v", err)
	}
}

// The same for each way an answer comes — unstreamed, a stream's usage
// chunk, and a streamed call answered with the whole JSON — with counts
// written as floats, past int64 (clamped to maxReportedTokens) and in the
// details.
func TestOpenAILooseUsageCounts(t *testing.T) {
	const usage = `{"prompt_tokens":10.0,"completion_tokens":1e30,"total_tokens":-4.5,"prompt_tokens_details":{"cached_tokens":2.0},"completion_tokens_details":{"reasoning_tokens":1.5}}`
	body := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":` + usage + `}`
	want := Usage{PromptTokens: 10, CompletionTokens: maxReportedTokens, TotalTokens: 10 + maxReportedTokens}
	want.PromptTokensDetails.CachedTokens = 2
	want.CompletionTokensDetails.ReasoningTokens = 1
	for _, c := range []struct {
		name   string
		stream bool
		write  func(w http.ResponseWriter)
	}{
		{"unstreamed", false, func(w http.ResponseWriter) { writeError(w, 200, nil, body) }},
		{"streamed", true, func(w http.ResponseWriter) {
			startStream(w)
			sse(w, chunk("{}", "stop"), `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":`+usage+`}`, "[DONE]")
		}},
		{"streamed call answered with JSON", true, func(w http.ResponseWriter) { writeError(w, 200, nil, body) }},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { c.write(w) })
		resp, err := newTestAdapter(t, srv.URL, func(o *OpenAIConfig) { o.Stream = c.stream }).Complete(context.Background(), testRequest())
		if err != nil || resp.Content != "{}" {
			t.Errorf("%s: a valid answer with loose usage counts was discarded: %v", c.name, err)
			continue
		}
		if resp.Usage != want {
			t.Errorf("%s: usage %+v, want %+v", c.name, resp.Usage, want)
		}
	}
}
