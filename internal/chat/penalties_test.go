package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

// presence_penalty, frequency_penalty, logit_bias and reasoning_effort are
// refused outside what OpenAI takes, naming the field; asking for log
// probabilities is refused, since the router's answer does not carry them.
func TestNormalizeRefusesPenaltiesLogitBiasAndLogprobs(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ fields, param, says string }{
		{`"presence_penalty":2.01`, "presence_penalty", "between -2 and 2"},
		{`"presence_penalty":-5`, "presence_penalty", "between -2 and 2"},
		{`"frequency_penalty":3`, "frequency_penalty", "between -2 and 2"},
		{`"frequency_penalty":-2.5`, "frequency_penalty", "between -2 and 2"},
		{`"logit_bias":"50256"`, "logit_bias", "must be an object"},
		{`"logit_bias":[1]`, "logit_bias", "must be an object"},
		{`"logit_bias":{"50256":"5"}`, "logit_bias", "must be an object"},
		{`"logit_bias":{"50256":101}`, "logit_bias", "whole number from -100 to 100"},
		{`"logit_bias":{"50256":-100.5}`, "logit_bias", "whole number from -100 to 100"},
		{`"logit_bias":{"50256":0.5}`, "logit_bias", `logit_bias["50256"] is 0.5`},
		{`"logit_bias":{"hello":1}`, "logit_bias", `key "hello" is not a token id`},
		{`"logit_bias":{"-1":1}`, "logit_bias", `key "-1" is not a token id`},
		{`"logit_bias":{"":1}`, "logit_bias", `key "" is not a token id`},
		{`"logit_bias":{"7":1,"007":2}`, "logit_bias", "names token 7 twice"},
		{`"reasoning_effort":""`, "reasoning_effort", "is not one of none, minimal, low, medium, high"},
		{`"reasoning_effort":"LOW"`, "reasoning_effort", "leave it out"},
		{`"logprobs":true`, "logprobs", "does not return log probabilities"},
		{`"top_logprobs":5`, "top_logprobs", "does not return log probabilities"},
		{`"logprobs":false,"top_logprobs":1`, "top_logprobs", "does not return log probabilities"},
	} {
		_, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		re, ok := err.(*RequestError)
		if !ok || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s: err %v, want param %s saying %q", c.fields, err, c.param, c.says)
		}
	}
}

// What is accepted is stored as OpenAI names it (the stored input is what a
// replica that adopts the job sends, and what the fingerprint covers); a
// value that asks for nothing (a 0 penalty, an empty logit_bias, logprobs
// false) is stored as nothing, so it is the same intent as leaving it out.
func TestNormalizeStoresPenaltiesLogitBiasAndReasoningEffort(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ fields, stored string }{
		{`"presence_penalty":-2,"frequency_penalty":2`, `"presence_penalty":-2,"frequency_penalty":2`},
		{`"presence_penalty":0.25`, `"presence_penalty":0.25`},
		{`"presence_penalty":0,"frequency_penalty":0,"logit_bias":{},"logprobs":false,"top_logprobs":0`, ``},
		{`"presence_penalty":null,"frequency_penalty":null,"logit_bias":null,"reasoning_effort":null,"logprobs":null,"top_logprobs":null`, ``},
		{`"logit_bias":{"50256":-100,"15":100.0,"7":0}`, `"logit_bias":{"15":100,"50256":-100,"7":0}`},
		{`"logit_bias":{"0050256":-100}`, `"logit_bias":{"50256":-100}`}, // one spelling per token
		{`"reasoning_effort":"minimal"`, `"reasoning_effort":"minimal"`},
		{`"reasoning_effort":"xhigh"`, `"reasoning_effort":"xhigh"`},
	} {
		in, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		if err != nil {
			t.Errorf("%s: %v", c.fields, err)
			continue
		}
		got, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"messages":[{"role":"user","content":"hi"}]}`
		if c.stored != "" {
			want = strings.TrimSuffix(want, "}") + "," + c.stored + "}"
		}
		if string(got) != want {
			t.Errorf("%s: stored %s, want %s", c.fields, got, want)
		}
	}
}
