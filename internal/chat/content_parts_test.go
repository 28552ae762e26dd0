package chat

import "testing"

// Text parts were joined with nothing between them: "Translate to French:"
// and "Good morning" reached the model as "Translate to French:Good
// morning". They are joined with a newline, as vLLM joins them. Found by
// review.
func TestNormalizeJoinsTextPartsWithNewlines(t *testing.T) {
	in, err := parse(t, `{"model":"m","messages":[{"role":"user","content":[`+
		`{"type":"text","text":"Translate to French:"},{"type":"text","text":"Good morning"},{"type":"text","text":""}]},`+
		`{"role":"system","content":[{"type":"text","text":"one part"}]}]}`).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Messages[0].Content; got != "Translate to French:\nGood morning\n" {
		t.Errorf("three parts joined as %q", got)
	}
	if got := in.Messages[1].Content; got != "one part" {
		t.Errorf("one part as %q", got)
	}
}

// An assistant message's refusal (an earlier answer's, sent back as history)
// was dropped: it is kept, so it is sent and fingerprinted. On another role
// it means nothing and is not kept.
func TestNormalizeKeepsAssistantRefusal(t *testing.T) {
	in, err := parse(t, `{"model":"m","messages":[{"role":"user","content":"hi"},`+
		`{"role":"assistant","content":null,"refusal":"I can't help with that."},{"role":"user","content":"why?","refusal":"x"}]}`).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if in.Messages[1].Refusal != "I can't help with that." || in.Messages[2].Refusal != "" {
		t.Errorf("refusals kept as %q, %q", in.Messages[1].Refusal, in.Messages[2].Refusal)
	}
}
