package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A usage whose total_tokens is larger than its prompt and completion
// tokens together — an OpenAI-compatible gateway in front of a Gemini
// thinking model reports the thoughts only in the total (and in
// completion_tokens_details.reasoning_tokens) — is priced in full: the
// provider bills the whole total, the thoughts at the output price. Its
// completion tokens are raised to the total less the prompt tokens, the
// answer's and a billed failure's alike. Before, such an answer was priced
// from its split alone. Found by review.
func TestReviewUsageWhoseTotalExceedsItsSplitIsPricedInFull(t *testing.T) {
	tgt, sp, a, _, _ := estimateFixture(t, "What is 15% of 240? Think it through carefully before answering.")
	price := &providers.Price{InputPerMTok: 0.30, OutputPerMTok: 2.50}
	for _, c := range []struct {
		name string
		resp providers.Response
		want providers.Usage
	}{
		{"answer plus thoughts", providers.Response{Content: "36", Usage: providers.Usage{PromptTokens: 20, CompletionTokens: 198, TotalTokens: 623,
			CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 405}}},
			providers.Usage{PromptTokens: 20, CompletionTokens: 603, TotalTokens: 623,
				CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 405}}},
		{"thoughts only", providers.Response{Usage: providers.Usage{PromptTokens: 21, TotalTokens: 81,
			CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 60}}},
			providers.Usage{PromptTokens: 21, CompletionTokens: 60, TotalTokens: 81,
				CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 60}}},
		{"an answer reported with thoughts and no output count", providers.Response{Content: "36", Usage: providers.Usage{PromptTokens: 20, TotalTokens: 90}},
			providers.Usage{PromptTokens: 20, CompletionTokens: 70, TotalTokens: 90}},
	} {
		u := c.resp.Usage
		if est, ok := answerUsage(tgt, sp, a, &c.resp); ok {
			u = est
		}
		if u != c.want {
			t.Errorf("%s: usage %+v, want %+v (the provider's figures, the whole total priced)", c.name, u, c.want)
		}
		got, _ := price.Cost(u)
		billed := (float64(u.PromptTokens)*price.InputPerMTok + float64(c.resp.Usage.TotalTokens-u.PromptTokens)*price.OutputPerMTok) / 1e6
		if got < billed {
			t.Errorf("%s: usage %+v is priced %.8f USD; the provider's total of %d tokens bills %.8f", c.name, u, got, c.resp.Usage.TotalTokens, billed)
		}
		// A failed answer the provider billed (a refusal, a content
		// filter, an empty answer) is recorded with the same figures.
		reported := c.resp.Usage
		out, usage := billedOutcome(tgt, sp, a, &providers.Error{Kind: providers.KindEmptyResponse, Usage: &reported})
		if usage != c.want || out.Usage != c.want {
			t.Errorf("%s, billed with a failure: usage %+v (stored %+v), want %+v", c.name, usage, out.Usage, c.want)
		}
	}
	// A usage whose parts add up (or with no split at all: answerUsage
	// estimates it) is kept as reported.
	for _, u := range []providers.Usage{{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23}, {PromptTokens: 20, CompletionTokens: 3},
		{TotalTokens: 500}} {
		if got, ok := totalGapFilled(u); ok || got != u {
			t.Errorf("usage %+v filled as %+v, want it kept", u, got)
		}
	}
}
