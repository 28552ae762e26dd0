package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

const offeredTools = `"tools":[{"type":"function","function":{"name":"f"}}]`

// parallel_tool_calls was ignored: not stored (so not in the fingerprint),
// not sent. It is part of the intent now, and refused without tools as
// OpenAI refuses it. Found by review.
func TestNormalizeKeepsParallelToolCalls(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ fields, want string }{
		{offeredTools + `,"parallel_tool_calls":false`, `"parallel_tool_calls":false`},
		{offeredTools + `,"parallel_tool_calls":true`, `"parallel_tool_calls":true`},
		{offeredTools + `,"parallel_tool_calls":null`, ``},
		{offeredTools, ``},
	} {
		in, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.fields, err)
		}
		b, _ := json.Marshal(in)
		if has := strings.Contains(string(b), `"parallel_tool_calls"`); c.want == "" && has || c.want != "" && !strings.Contains(string(b), c.want) {
			t.Errorf("%s: stored %s, want %q in it", c.fields, b, c.want)
		}
	}
	for _, fields := range []string{`"parallel_tool_calls":false`, `"parallel_tool_calls":true`, `"tool_choice":"none","parallel_tool_calls":false`} {
		_, err := parse(t, `{"model":"m",`+msgs+`,`+fields+`}`).Normalize()
		if re, ok := err.(*RequestError); !ok || re.Param != "parallel_tool_calls" || !strings.Contains(re.Message, "only allowed when tools") {
			t.Errorf("%s: err %v, want 400 naming parallel_tool_calls", fields, err)
		}
	}
}

// An answer of more than one tool call to a request that set
// parallel_tool_calls false broke the request's contract: refused as the
// provider's fault (the race fails over), where it reached the caller.
func TestJudgeRefusesParallelCallsWhenTheCallerSaidNo(t *testing.T) {
	off, on := false, true
	two := json.RawMessage(`[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},` +
		`{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]`)
	one := json.RawMessage(`[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]`)
	tools := json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)
	_, violations := Judge(&Input{Tools: tools, ParallelToolCalls: &off}, nil, "job-1", &providers.Response{ToolCalls: two, FinishReason: "tool_calls"})
	if len(violations) != 1 || violations[0].Rule != "tool_calls" || !ProviderRule(violations[0].Rule) ||
		!strings.Contains(violations[0].Message, "parallel_tool_calls false") {
		t.Fatalf("two calls to parallel_tool_calls false: %+v, want the provider's tool_calls violation", violations)
	}
	for _, c := range []struct {
		name     string
		parallel *bool
		calls    json.RawMessage
	}{{"one call, false", &off, one}, {"two calls, true", &on, two}, {"two calls, unset", nil, two}} {
		if raw, violations := Judge(&Input{Tools: tools, ParallelToolCalls: c.parallel}, nil, "job-1",
			&providers.Response{ToolCalls: c.calls, FinishReason: "tool_calls"}); len(violations) > 0 || raw == nil {
			t.Errorf("%s: refused: %+v", c.name, violations)
		}
	}
}

// verbosity and chat_template_kwargs were dropped and not fingerprinted:
// they are stored (and so fingerprinted and sent) now; a value OpenAI would
// refuse is a 400 naming the field.
func TestNormalizeKeepsVerbosityAndTemplateKwargs(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	in, err := parse(t, `{"model":"m",`+msgs+`,"verbosity":"low","chat_template_kwargs":{ "enable_thinking" : false }}`).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(in)
	if !strings.HasSuffix(string(b), `,"verbosity":"low","chat_template_kwargs":{"enable_thinking":false}}`) {
		t.Errorf("stored %s", b)
	}
	in, err = parse(t, `{"model":"m",`+msgs+`,"verbosity":null,"chat_template_kwargs":{}}`).Normalize()
	if b, _ := json.Marshal(in); err != nil || strings.Contains(string(b), "verbosity") || strings.Contains(string(b), "chat_template_kwargs") {
		t.Errorf("null verbosity and empty kwargs: stored %s (%v), want neither", b, err)
	}
	for _, c := range []struct{ fields, param string }{
		{`"verbosity":"loud"`, "verbosity"},
		{`"verbosity":3`, ""}, // not a string: the body does not decode
		{`"chat_template_kwargs":[1]`, "chat_template_kwargs"},
		{`"chat_template_kwargs":"x"`, "chat_template_kwargs"},
	} {
		var r Request
		if err := json.Unmarshal([]byte(`{"model":"m",`+msgs+`,`+c.fields+`}`), &r); err != nil {
			if c.param != "" {
				t.Errorf("%s: %v", c.fields, err)
			}
			continue
		}
		_, err := r.Normalize()
		if re, ok := err.(*RequestError); !ok || re.Param != c.param {
			t.Errorf("%s: err %v, want 400 naming %s", c.fields, err, c.param)
		}
	}
}
