package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A prompt count no request to the target can reach is replaced by the
// router's estimate of the prompt (plausibleUsage); its cached part, which
// the adapter bounded only by the garbage count (an Anthropic
// cache_read_input_tokens of 2^32−1 is part of prompt_tokens, and cached
// clamped to it), is bounded by the estimate too: cached_tokens never
// exceeds prompt_tokens in the usage recorded and shown to a chat caller —
// for an answer and for a billed failure alike. A plausible usage keeps its
// cached count as reported.
func TestPlausibleUsageClampsCached(t *testing.T) {
	tgt, sp, a, _, in := estimateFixture(t, "Classify this ticket: the printer is on fire.")
	sp.maxTokens = 256
	tgt.ContextWindow = 128000
	reported := providers.Usage{PromptTokens: 4294967295 + 12, CompletionTokens: 3, TotalTokens: 4294967295 + 15}
	reported.PromptTokensDetails.CachedTokens = 4294967295
	resp := providers.Response{Content: `{"category":"hardware"}`, FinishReason: "stop", Usage: reported}
	u, ok := answerUsage(tgt, sp, a, &resp)
	if !ok || u.PromptTokens != in {
		t.Fatalf("answer usage %+v (%v), want the prompt estimated at %d", u, ok, in)
	}
	failed := reported
	_, billed := billedOutcome(tgt, sp, a, &providers.Error{Kind: providers.KindContentPolicy, Usage: &failed, Partial: resp.Content})
	for what, u := range map[string]providers.Usage{"answer": u, "billed failure": billed} {
		if u.PromptTokensDetails.CachedTokens > u.PromptTokens {
			t.Errorf("%s: cached_tokens %d over prompt_tokens %d (%+v)", what, u.PromptTokensDetails.CachedTokens, u.PromptTokens, u)
		}
	}
	// Plausible counts, the cached part with them, stay the provider's.
	plain := providers.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23}
	plain.PromptTokensDetails.CachedTokens = 16
	resp = providers.Response{Content: "36", FinishReason: "stop", Usage: plain}
	if u, _ := answerUsage(tgt, sp, a, &resp); u.PromptTokensDetails.CachedTokens != 16 || u.PromptTokens != 20 {
		t.Errorf("a plausible usage recorded as %+v, want its cached 16 of 20 as reported", u)
	}
}
