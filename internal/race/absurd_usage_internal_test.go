package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// SPEC §18: each attempt's usage is priced into its cost_usd, the job's, and
// router_cost_usd_total (a counter: never lowered). A provider's counts were
// clamped only to 0..2^40, and a total larger than the split was priced in
// full as output (totalGapFilled), so a gateway's garbage total_tokens —
// 4294967295 (an unsigned -1), or 1e30 clamped to 2^40 — made a 3-token
// answer to a request capped at 256 output tokens, on a target with a 128k
// window, cost 42,949 USD, or 11 million, at 10 USD/Mtok; so did such a
// completion_tokens. A count no request of the target can reach (over its
// window plus the max_tokens sent; over maxPlausibleTokens when the window
// is unknown) is not priced: it is estimated, and the usage marked
// Estimated — for an answer and for a billed failure alike. Plausible
// counts stay the provider's.
func TestAbsurdUsageIsNotPriced(t *testing.T) {
	tgt, sp, a, _, _ := estimateFixture(t, "Classify this ticket: the printer is on fire.")
	sp.maxTokens = 256
	price := &providers.Price{InputPerMTok: 2.50, OutputPerMTok: 10}
	for _, window := range []int{128000, 0} {
		tgt.ContextWindow = window
		for _, c := range []struct {
			name string
			u    providers.Usage
		}{
			{"total_tokens an unsigned -1", providers.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 4294967295}},
			{"total_tokens 1e30, clamped to 2^40", providers.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 1 << 40}},
			{"completion_tokens an unsigned -1", providers.Usage{PromptTokens: 20, CompletionTokens: 4294967295, TotalTokens: 4294967315}},
			{"prompt_tokens 2^40", providers.Usage{PromptTokens: 1 << 40, CompletionTokens: 3, TotalTokens: 1<<40 + 3}},
		} {
			resp := providers.Response{Content: `{"category":"hardware"}`, FinishReason: "stop", Usage: c.u}
			u, ok := answerUsage(tgt, sp, a, &resp)
			if !ok {
				u = c.u
			}
			reported := c.u
			_, billed := billedOutcome(tgt, sp, a, &providers.Error{Kind: providers.KindContentPolicy, Usage: &reported, Partial: resp.Content})
			for what, u := range map[string]providers.Usage{"answer": u, "billed failure": billed} {
				usd, _ := price.Cost(u)
				if u.CompletionTokens > 1000 || u.PromptTokens > 1000 || u.TotalTokens > 1000 || !u.Estimated || usd > 0.01 {
					t.Errorf("window %d, %s: %s recorded as %+v, priced %.2f USD, for a 3-token answer (max_tokens %d); want it estimated",
						window, c.name, what, u, usd, sp.maxTokens)
				}
			}
		}
		// Plausible counts are the provider's, a total's gap priced.
		resp := providers.Response{Content: "36", Usage: providers.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 200}}
		if u, ok := answerUsage(tgt, sp, a, &resp); !ok || u != (providers.Usage{PromptTokens: 20, CompletionTokens: 180, TotalTokens: 200}) {
			t.Errorf("window %d: a plausible usage with a gap recorded as %+v (%v)", window, u, ok)
		}
	}
}
