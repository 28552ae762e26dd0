package chat

import (
	"strings"
	"testing"
)

// Sampling parameters a provider would refuse with a 400 are refused here,
// before any job exists, naming the field (so the Idempotency-Key stays free
// for the corrected request).
func TestNormalizeRefusesParametersProvidersRefuse(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const tools = `"tools":[{"type":"function","function":{"name":"f"}}]`
	for _, c := range []struct{ fields, param, says string }{
		{`"temperature":5`, "temperature", "between 0 and 2"},
		{`"temperature":-0.5`, "temperature", "between 0 and 2"},
		{`"max_tokens":0`, "max_tokens", "positive"},
		{`"max_tokens":-1`, "max_tokens", "positive"},
		{`"max_completion_tokens":0`, "max_completion_tokens", "positive"},
		{`"max_completion_tokens":-5`, "max_completion_tokens", "positive"},
		{`"max_tokens":10,"max_completion_tokens":-5`, "max_completion_tokens", "positive"},
		{`"tool_choice":"auto"`, "tool_choice", "only allowed when tools"},
		{`"tool_choice":"required"`, "tool_choice", "only allowed when tools"},
		{`"tool_choice":{"type":"function","function":{"name":"f"}}`, "tool_choice", "only allowed when tools"},
		{`"tool_choice":"sometimes",` + tools, "tool_choice", `"sometimes"`},
		{`"tool_choice":7,` + tools, "tool_choice", "must be"},
	} {
		_, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		re, ok := err.(*RequestError)
		if !ok || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s: err %v, want param %s saying %q", c.fields, err, c.param, c.says)
		}
	}
}

func TestNormalizeAcceptsParametersInRange(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		fields    string
		maxTokens int
		choice    string
	}{
		{`"temperature":0`, 0, ""},
		{`"temperature":2`, 0, ""},
		{`"temperature":null,"max_tokens":null,"max_completion_tokens":null,"tool_choice":null`, 0, ""},
		{`"max_tokens":1`, 1, ""},
		{`"max_tokens":7,"max_completion_tokens":9`, 9, ""},
		{`"max_tokens":0,"max_completion_tokens":9`, 9, ""}, // the unused old name is not judged
		// "none" without tools is what no tool_choice means; it is dropped.
		{`"tool_choice":"none"`, 0, ""},
		{`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"`, 0, `"none"`},
		{`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}`, 0, `{"type":"function","function":{"name":"f"}}`},
	} {
		in, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		if err != nil {
			t.Errorf("%s: %v", c.fields, err)
			continue
		}
		if in.MaxTokens != c.maxTokens || string(in.ToolChoice) != c.choice {
			t.Errorf("%s: max_tokens %d tool_choice %s, want %d %s", c.fields, in.MaxTokens, in.ToolChoice, c.maxTokens, c.choice)
		}
	}
}
