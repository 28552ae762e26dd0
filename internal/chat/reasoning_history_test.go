package chat

import (
	"strings"
	"testing"
)

// An assistant message's reasoning_content (an earlier answer's, sent back
// as history) is part of the stored intent, as its refusal is: DeepSeek's
// thinking mode refuses a tool loop whose assistant turns lost it. An empty
// or null one is none, so an intent without it keeps its bytes (and its
// fingerprint: TestIntentOfARequestWithoutTheNewFieldsIsUnchanged holds a
// request without it); another role's is not kept, as a refusal is not.
func TestAssistantReasoningContentInTheIntent(t *testing.T) {
	const head = `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"4"`
	const tail = `},{"role":"user","content":"why?"}]}`
	plain := intentOf(t, head+tail)
	if strings.Contains(plain, "reasoning_content") {
		t.Fatalf("intent without reasoning: %s", plain)
	}
	for _, none := range []string{`,"reasoning_content":null`, `,"reasoning_content":""`} {
		if got := intentOf(t, head+none+tail); got != plain {
			t.Errorf("%s: intent %s, want %s", none, got, plain)
		}
	}
	in, err := parse(t, head+`,"reasoning_content":"2+2 is 4"`+tail).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Messages[1].ReasoningContent; got != "2+2 is 4" {
		t.Fatalf("assistant reasoning kept as %q", got)
	}
	if got := intentOf(t, head+`,"reasoning_content":"2+2 is 4"`+tail); got == plain || !strings.Contains(got, `"reasoning_content":"2+2 is 4"`) {
		t.Errorf("intent with reasoning %s", got)
	}
	in, err = parse(t, `{"model":"m","messages":[{"role":"user","content":"hi","reasoning_content":"x"}]}`).Normalize()
	if err != nil || in.Messages[0].ReasoningContent != "" {
		t.Fatalf("a user message's reasoning_content: %v, kept as %q", err, in.Messages[0].ReasoningContent)
	}
}
