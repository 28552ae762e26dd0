package race

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// repeatTo is unit repeated to exactly n bytes, cut at a rune boundary.
func repeatTo(unit string, n int) string {
	s := strings.Repeat(unit, n/len(unit)+1)
	return s[:runeCut(s, n)]
}

// A prompt or an answer's text over maxTokenizedBytes is estimated from its
// head, counted by the tokenizer and scaled by length: within a fifth of
// the tokenizer's count of the whole, in scripts whose tokens are far from 4
// bytes, and never below the estimate of a text just under the bound. (Found
// by review: past 16 KiB the estimate was 4 bytes a token — 46% of the real
// count for emoji with cl100k_base, 179% for Thai with o200k_base — and it
// dropped as the prompt grew past the bound.)
func TestEstimateOfALongTextIsScaledFromItsHead(t *testing.T) {
	units := map[string]string{
		"thai":    "สวัสดีครับ ผมต้องการคืนเงิน ",
		"korean":  "안녕하세요 환불을 요청합니다 ",
		"emoji":   "🙂🚀🎉 ",
		"chinese": "您好，我想申请退款，因为订单重复扣款了。",
		"english": "The customer was charged twice for the same order. ",
	}
	tgt := &Target{}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4-5"} {
		enc, err := tokens.EncodingForModel("", model)
		if err != nil {
			t.Fatal(err)
		}
		a := &store.Attempt{Model: model}
		for script, unit := range units {
			below := &spec{msgs: []providers.Message{{Role: "user", Content: repeatTo(unit, maxTokenizedBytes-200)}}}
			above := &spec{msgs: []providers.Message{{Role: "user", Content: repeatTo(unit, maxTokenizedBytes+200)}}}
			long := &spec{msgs: []providers.Message{{Role: "system", Content: repeatTo(unit, 3000)},
				{Role: "user", Content: repeatTo(unit, 5*maxTokenizedBytes)}}}
			nBelow, ok := promptEstimate(tgt, below, a)
			if !ok {
				t.Fatalf("%s %s: no estimate below the bound", model, script)
			}
			for name, sp := range map[string]*spec{"just above the bound": above, "five times the bound": long} {
				n, ok := promptEstimate(tgt, sp, a)
				real, err := tokens.CountMessages(enc, counted(sp))
				if err != nil || !ok {
					t.Fatalf("%s %s %s: %v %v", model, script, name, ok, err)
				}
				if n < nBelow || n*100 < real*80 || n*100 > real*125 {
					t.Errorf("%s %s, prompt %s: estimated %d tokens, counted %d (%d just below the bound)", model, script, name, n, real, nBelow)
				}
			}
			text := repeatTo(unit, 3*maxTokenizedBytes+77)
			n, ok := textEstimate(tgt, long, a, text)
			real, err := tokens.CountText(enc, text)
			if err != nil || !ok {
				t.Fatalf("%s %s: %v %v", model, script, ok, err)
			}
			head, _ := tokens.CountText(enc, text[:runeCut(text, maxTokenizedBytes)])
			if n < head || n*100 < real*80 || n*100 > real*125 {
				t.Errorf("%s %s, answer text: estimated %d tokens, counted %d (its head %d)", model, script, n, real, head)
			}
		}
	}
}

// The head counted of a long prompt is bounded by maxTokenizedBytes however
// the prompt is made — one long message, or many short ones — so that
// estimating a hedge loser's prompt costs at most what a prompt at the bound
// costs, and it cuts no character in two.
func TestHeadOfALongPromptIsBounded(t *testing.T) {
	many := make([]providers.Message, 5000)
	for i := range many {
		many[i] = providers.Message{Role: "user", Name: "n", Content: "ünïcödé text", ToolCallID: "call_1"}
	}
	one := []providers.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: repeatTo("日本語のテキスト", 10*maxTokenizedBytes)},
		{Role: "assistant", ToolCalls: []byte(`[{"id":"x"}]`)}}
	calls := []providers.Message{{Role: "assistant", ToolCalls: []byte(`[{"id":"call_1","function":{"arguments":"` +
		repeatTo("引数", 4*maxTokenizedBytes) + `"}}]`)}, {Role: "tool", ToolCallID: "call_1", Content: "done"}}
	for name, msgs := range map[string][]providers.Message{"many short messages": many, "one long message": one, "long tool calls": calls} {
		head := headMessages(msgs, maxTokenizedBytes)
		if b := byteBound(head); b > maxTokenizedBytes || b < maxTokenizedBytes-100 {
			t.Errorf("%s: head of %d bytes (bound %d)", name, b, maxTokenizedBytes)
		}
		for _, m := range head {
			if !utf8.ValidString(m.Content) || !utf8.Valid(m.ToolCalls) {
				t.Errorf("%s: a character cut in two: %q %q", name, m.Content, m.ToolCalls)
			}
		}
	}
}
