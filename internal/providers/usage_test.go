package providers

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A provider's negative or absurd token counts are kept between 0 and
// maxReportedTokens, over real HTTP through both adapters: they would
// otherwise become negative costs in the database and a cost counter the
// metrics library refuses to decrease.
func TestReportedUsageIsBounded(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		body := strings.Replace(completionBody, `"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}`,
			`"usage":{"prompt_tokens":-11,"completion_tokens":9223372036854775807,"total_tokens":-5}`, 1)
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, 200, nil, body) })
		resp, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = false }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatal(err)
		}
		if u := resp.Usage; u.PromptTokens != 0 || u.CompletionTokens != maxReportedTokens || u.TotalTokens != maxReportedTokens {
			t.Fatalf("usage %+v", u)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: -3, OutputTokens: -7}))
		resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = false }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatal(err)
		}
		if u := resp.Usage; u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != 0 {
			t.Fatalf("usage %+v", u)
		}
	})
	if s := sumTokens(math.MaxInt64, math.MaxInt64, -1); s != math.MaxInt64 {
		t.Fatalf("sumTokens wrapped: %d", s)
	}
	if u := reportedUsage(3, 4, 0); u.TotalTokens != 7 {
		t.Fatalf("a missing total is the sum: %+v", u)
	}
}
