package race

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// docs/prompts.md tells operators of models without a tiktoken encoding
// (Claude, Llama, Mistral) to set context_window BELOW the model's real
// window, because the router's count undercounts ("text of short numbers
// can need a third more, long runs of digits up to three times the
// count"); context_window also defaults to 128000 when unset. So a prompt
// that routing lets through (its count plus max_tokens fits the configured
// window) is legitimately reported by the provider with more prompt tokens
// than the configured window plus max_tokens. Those are the provider's
// real, billed counts: they must be priced as reported, not replaced by the
// router's (lower) count and marked estimated.
func TestUsageOverConfiguredWindowByTokenizerMarginIsKept(t *testing.T) {
	var b strings.Builder
	for i := range 800 {
		fmt.Fprintf(&b, "%04d ", 1000+i*7%9000)
	}
	tgt, sp, a, _, in := estimateFixture(t, "Sum these numbers: "+b.String())
	a.Model = "llama-2-7b-chat" // no tiktoken encoding: counted with cl100k_base
	sp.maxTokens = 256
	// The operator set the window so that this prompt just fits, as
	// routing checks it: in + max_tokens <= context_window.
	tgt.ContextWindow = in + sp.maxTokens
	reported := providers.Usage{PromptTokens: in * 4 / 3, CompletionTokens: 5, TotalTokens: in*4/3 + 5}
	resp := providers.Response{Content: "5194000", FinishReason: "stop", Usage: reported}
	u, ok := answerUsage(tgt, sp, a, &resp)
	if !ok {
		u = reported
	}
	if u.PromptTokens != reported.PromptTokens || u.Estimated {
		t.Errorf("answer: the provider reported %d prompt tokens (a third over the router's %d, as docs/prompts.md says it can be; window %d); recorded %+v: the provider's billed count was replaced by the router's estimate",
			reported.PromptTokens, in, tgt.ContextWindow, u)
	}
	r := reported
	_, billed := billedOutcome(tgt, sp, a, &providers.Error{Kind: providers.KindContentPolicy, Usage: &r, Partial: resp.Content})
	if billed.PromptTokens != reported.PromptTokens || billed.Estimated {
		t.Errorf("billed failure: recorded %+v, want the provider's %+v", billed, reported)
	}
}
