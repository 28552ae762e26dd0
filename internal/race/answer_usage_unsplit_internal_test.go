package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// A usage that cannot price its answer — a total with no split (prompt and
// completion 0: a gateway that reports only total_tokens), or a completion
// count of 0 for an answer with content or tool calls — is estimated: the
// first wholly, as if no usage had come (total_tokens the sum of the
// router's counts), the second by raising its completion tokens to the
// router's count of the answer, the provider's prompt tokens kept. A usage
// with a real split is kept as reported. (Found by review: a winner whose
// usage was {"total_tokens": 500} had no cost_usd, and neither had its job.)
func TestAnswerUsageEstimatesAnUnsplitOrEmptyOutputCount(t *testing.T) {
	tgt, sp, a, enc, in := estimateFixture(t, "Classify the ticket: I was charged twice.")
	const text = `{"category":"billing","summary":"The customer was charged twice for one order."}`
	const calls = `[{"id":"call_1","type":"function","function":{"name":"refund","arguments":"{\"order\":42}"}}]`
	out, err := tokens.CountText(enc, text)
	if err != nil {
		t.Fatal(err)
	}
	callsOut, err := tokens.CountText(enc, calls)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		resp  providers.Response
		want  providers.Usage
		estim bool
	}{
		{"a total without its split", providers.Response{Content: text, Usage: providers.Usage{TotalTokens: 500}},
			providers.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Estimated: true}, true},
		{"a total without its split, cached tokens kept", providers.Response{Content: text, Usage: providers.Usage{TotalTokens: 500,
			PromptTokensDetails: providers.PromptTokensDetails{CachedTokens: 7}}},
			providers.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Estimated: true,
				PromptTokensDetails: providers.PromptTokensDetails{CachedTokens: 7}}, true},
		{"no usage", providers.Response{Content: text},
			providers.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Estimated: true}, true},
		{"no output count for content", providers.Response{Content: text, Usage: providers.Usage{PromptTokens: 40, TotalTokens: 40}},
			providers.Usage{PromptTokens: 40, CompletionTokens: out, TotalTokens: 40 + out, Estimated: true}, true},
		{"no output count for tool calls", providers.Response{ToolCalls: []byte(calls), Usage: providers.Usage{PromptTokens: 40, TotalTokens: 40}},
			providers.Usage{PromptTokens: 40, CompletionTokens: callsOut, TotalTokens: 40 + callsOut, Estimated: true}, true},
		{"a real split", providers.Response{Content: text, Usage: providers.Usage{PromptTokens: 40, CompletionTokens: 3, TotalTokens: 43}},
			providers.Usage{}, false},
		{"a real split with no prompt count", providers.Response{Content: text, Usage: providers.Usage{CompletionTokens: 3, TotalTokens: 3}},
			providers.Usage{}, false},
		{"no output count for an empty answer", providers.Response{Usage: providers.Usage{PromptTokens: 40, TotalTokens: 40}},
			providers.Usage{}, false},
	}
	for _, c := range cases {
		u, ok := answerUsage(tgt, sp, a, &c.resp)
		if ok != c.estim || (ok && u != c.want) {
			t.Errorf("%s: usage %+v (estimated %v), want %+v (estimated %v)", c.name, u, ok, c.want, c.estim)
		}
	}
}
