package providers

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// An unstreamed answer with several choices listed out of order is choice
// 0's — the one whose index is 0, as a streamed answer's is — not whichever
// comes first: its content, and the reasoning read from its body, were the
// choice of index 1. Found in review.
func TestUnstreamedAnswerIsTheChoiceOfIndexZero(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1700000000,"model":"m","choices":[`+
			`{"index":1,"message":{"role":"assistant","content":"second","reasoning":"thought two"},"finish_reason":"stop"},`+
			`{"index":0,"message":{"role":"assistant","content":"first","reasoning":"thought one"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Model, c.Stream = "m", false })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "first" || resp.ReasoningContent != "thought one" {
		t.Fatalf("content %q, reasoning %q; want choice 0's (index 0): \"first\", \"thought one\"", resp.Content, resp.ReasoningContent)
	}
}
