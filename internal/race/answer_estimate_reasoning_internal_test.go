package race

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A reasoning model behind an OpenAI-compatible server that reports no usage
// (or a completion_tokens of 0) was billed for its reasoning as output, but
// the router's estimate of a finished answer counted only its content and
// tool calls — while a cut stream's estimate (providers.Error.Partial) counted
// the reasoning: a hedge loser cut mid-reasoning was costed above the winner
// that finished it. Found by review.
func TestWholeAnswerEstimateCountsReasoning(t *testing.T) {
	tgt := &Target{}
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "Think hard."}}}
	a := &store.Attempt{Model: "gpt-4o"}
	reasoning := strings.Repeat("let me think about this step ", 500)
	for name, usage := range map[string]providers.Usage{
		"no usage":            {},
		"completion_tokens 0": {PromptTokens: 12},
	} {
		with, ok1 := answerUsage(tgt, sp, a, &providers.Response{Content: "42", ReasoningContent: reasoning, Usage: usage})
		without, ok2 := answerUsage(tgt, sp, a, &providers.Response{Content: "42", Usage: usage})
		if !ok1 || !ok2 || !with.Estimated {
			t.Fatalf("%s: no estimate: %v %v %+v", name, ok1, ok2, with)
		}
		if with.CompletionTokens < without.CompletionTokens+500 {
			t.Errorf("%s: estimated completion tokens with %d bytes of reasoning: %d, without: %d — the reasoning the provider billed is not counted",
				name, len(reasoning), with.CompletionTokens, without.CompletionTokens)
		}
	}
}
