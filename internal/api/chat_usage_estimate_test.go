package api_test

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A provider that reported no usage (an OpenAI-compatible server that
// ignores stream_options.include_usage) billed the answer all the same: the
// chat completion's usage is the router's count of the prompt and the answer,
// marked estimated, rather than zeros a caller would take for the bill.
func TestChatAnswerWithoutUsageCarriesAnEstimate(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "An answer whose provider said nothing of its tokens.", Usage: &providers.Usage{}}
	}})
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","messages":[{"role":"user","content":"how many tokens is this?"}]}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	u, _ := r.body["usage"].(map[string]any)
	p, _ := u["prompt_tokens"].(float64)
	c, _ := u["completion_tokens"].(float64)
	tot, _ := u["total_tokens"].(float64)
	if p <= 0 || c <= 0 || tot != p+c || u["estimated"] != true {
		t.Fatalf("usage %v, want the router's estimate of prompt and answer, estimated: true", u)
	}
}
