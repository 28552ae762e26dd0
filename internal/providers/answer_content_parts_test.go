package providers

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// A whole answer whose content is an array of parts (Mistral's Magistral
// models: a "thinking" part, then the answer's "text" parts) was judged
// empty: go-openai decodes such content into MultiContent, which the adapter
// never read, so the answer failed over (502 "the answer is empty") and its
// target's breaker counted it. Its content is its text parts, joined; the
// thinking is not content. Found by review (rchat2 #2).
func TestUnstreamedContentPartsAreTheAnswer(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1700000000,"model":"magistral-medium-latest","choices":[{"index":0,"message":{"role":"assistant","content":[`+
			`{"type":"thinking","thinking":[{"type":"text","text":"2+2 is 4"}]},{"type":"text","text":"The answer "},{"type":"text","text":"is 4."}]},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Model, c.Stream = "magistral-medium-latest", false })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "The answer is 4." {
		t.Fatalf("content %q, want the text parts joined, without the thinking", resp.Content)
	}
}
