package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A whole stream whose message_delta carries no output count (a gateway that
// strips it) won with message_start's provisional output_tokens 1 as the
// provider's exact figure: a 2,000-word answer was recorded, priced and
// returned to the caller as one output token. The error path raised such a
// provisional count (withPartial, the race's provisionalUsage); the success
// path did not, and the race's answerUsage stepped aside since the usage was
// not zero. The output is estimated from the answer (4 bytes a token), the
// input stays Anthropic's, and the usage is marked Estimated; a stream whose
// message_delta gave the count keeps it as reported. Found by review.
func TestAnthropicWholeStreamWithoutOutputCountIsEstimated(t *testing.T) {
	long := strings.Repeat("word ", 2000) // 10,000 bytes
	uncounted := []string{
		anthWhole[0], anthWhole[1],
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + long + `"}}`,
		anthWhole[4],
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}`,
		anthWhole[6],
	}
	for name, c := range map[string]struct {
		evs  []string
		want Usage
	}{
		"no output count": {uncounted, Usage{PromptTokens: 12, CompletionTokens: 2500, TotalTokens: 2512, Estimated: true}},
		"output counted":  {anthWhole, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, c.evs...) })
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
		resp, err := p.Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != c.want {
			t.Errorf("%s: usage %+v, want %+v", name, resp.Usage, c.want)
		}
	}
}
