package race

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// An answer whose adapter estimated its output count (the Anthropic adapter,
// for a whole stream whose message_delta gave no output count: 4 bytes a
// token over message_start's provisional 1, marked Estimated) has its
// completion tokens recounted with the target's tokenizer, as an answer
// without usage has; the provider's input tokens stay. A provider's own
// count, not estimated, is kept as reported. (Found by review: such an
// answer was recorded as one output token.)
func TestAnswerUsageRecountsAnAdaptersOutputEstimate(t *testing.T) {
	tgt := &Target{}
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "Write a long essay."}}}
	a := &store.Attempt{Model: "gpt-4o"}
	enc, err := tokens.EncodingForModel("", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("word ", 2000)
	calls := `[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}]`
	want, err := tokens.CountText(enc, text)
	if err != nil {
		t.Fatal(err)
	}
	n, err := tokens.CountText(enc, calls)
	if err != nil {
		t.Fatal(err)
	}
	want += n
	estimated := providers.Usage{PromptTokens: 12, CompletionTokens: (len(text) + len(calls) + 3) / 4, Estimated: true}
	estimated.TotalTokens = 12 + estimated.CompletionTokens
	u, ok := answerUsage(tgt, sp, a, &providers.Response{Content: text, ToolCalls: []byte(calls), Usage: estimated})
	if !ok || u.PromptTokens != 12 || u.CompletionTokens != want || u.TotalTokens != 12+want || !u.Estimated {
		t.Fatalf("usage %+v (ok %v), want 12 prompt tokens and %d completion tokens, estimated", u, ok, want)
	}
	reported := providers.Usage{PromptTokens: 12, CompletionTokens: 1, TotalTokens: 13}
	if u, ok := answerUsage(tgt, sp, a, &providers.Response{Content: text, Usage: reported}); ok {
		t.Fatalf("a provider's own count was replaced: %+v", u)
	}
}
