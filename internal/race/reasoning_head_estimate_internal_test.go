package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// docs/providers.md: "of a prompt over 16 KiB only the first 16 KiB are
// tokenized and the count is scaled by the prompt's length". The prompt's
// length (byteBound) and its count (tokens.CountMessages) leave an assistant
// turn's reasoning_content out (TestReasoningContentIsNotCounted), but
// headMessages spends the 16 KiB head budget on it: a history whose early
// assistant turn carries a long reasoning_content (an agent that sends its
// reasoning model's turns back, as Kimi's and DeepSeek's thinking-mode tool
// loops do) has a "head" made of a few short messages — their per-message
// overhead, not text — and that count is scaled by the rest of the prompt's
// length. The estimate of such a prompt (every hedge loser's, unknown
// attempt's and no-usage answer's prompt_tokens, and so cost_usd and
// router_cost_usd_total) is far from the tokenizer's count of the same
// prompt: the control, the same history without the reasoning, is within
// the fifth TestEstimateOfALongTextIsScaledFromItsHead allows.
func TestReasoningContentDoesNotSkewTheLongPromptEstimate(t *testing.T) {
	enc, err := tokens.EncodingForModel("", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	tgt, a := &Target{}, &store.Attempt{Model: "gpt-4o"}
	history := func(reasoning string) *spec {
		return &spec{msgs: []providers.Message{
			{Role: "system", Content: "You are a coding agent."},
			{Role: "user", Content: "Fix the bug."},
			{Role: "assistant", Content: "Looking.", ReasoningContent: reasoning},
			{Role: "user", Content: repeatTo("The customer was charged twice for the same order, and support refunded one charge. ", 4*maxTokenizedBytes)},
		}}
	}
	for name, sp := range map[string]*spec{
		"control: no reasoning_content":          history(""),
		"an early turn's long reasoning_content": history(repeatTo("Let me think about what the user asked for. ", maxTokenizedBytes+1000)),
	} {
		n, ok := promptEstimate(tgt, sp, a)
		real, err := tokens.CountMessages(enc, counted(sp))
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", name, ok, err)
		}
		if n*100 < real*80 || n*100 > real*125 {
			t.Errorf("%s: prompt estimated at %d tokens, the tokenizer counts %d (%.0f%%): the head scaled is %d bytes of counted text",
				name, n, real, float64(n)*100/float64(real), byteBound(headMessages(counted(sp), maxTokenizedBytes)))
		}
	}
}
