package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// firstDelta is the delta of a streamed answer's first event, as raw members.
func firstDelta(t *testing.T, stream string) map[string]json.RawMessage {
	t.Helper()
	line, _, _ := strings.Cut(strings.TrimPrefix(stream, "data: "), "\n")
	var ch struct {
		Choices []struct {
			Delta map[string]json.RawMessage `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(line), &ch); err != nil || len(ch.Choices) != 1 {
		t.Fatalf("first event %q: %v", line, err)
	}
	return ch.Choices[0].Delta
}

// A streamed answer's first delta names the role with content "" as OpenAI's
// does — but not before tool calls with no text, where OpenAI sends no
// content and the SDKs' stream helpers would otherwise end with content ""
// instead of the null of the same answer unstreamed. Every stream also tells
// nginx not to buffer it (its keep-alive comments would be held back).
func TestChatStreamFirstDeltaAndProxyBuffering(t *testing.T) {
	const calls = `[{"type":"function","id":"call_1","function":{"name":"get_weather","arguments":"{}"}}]`
	b := setup(t, options{respond: func(_ int, r *providers.Request) providers.Step {
		if strings.Contains(string(r.Tools), "get_weather") {
			return providers.Step{ToolCalls: calls}
		}
		return providers.Step{Output: "sunny"}
	}})
	tools := b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`)
	if tools.status != 200 || !strings.Contains(string(tools.raw), `"tool_calls":`) {
		t.Fatalf("status %d: %s", tools.status, tools.raw)
	}
	if d := firstDelta(t, string(tools.raw)); string(d["role"]) != `"assistant"` || (d["content"] != nil && string(d["content"]) != "null") {
		t.Fatalf("first delta of a tool-call answer %v: want the role and no content", d)
	}
	text := b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if text.status != 200 {
		t.Fatalf("status %d: %s", text.status, text.raw)
	}
	if d := firstDelta(t, string(text.raw)); string(d["role"]) != `"assistant"` || string(d["content"]) != `""` {
		t.Fatalf("first delta of a text answer %v: want the role and content \"\"", d)
	}
	for _, r := range []reply{tools, text} {
		if got := r.header.Get("X-Accel-Buffering"); got != "no" {
			t.Fatalf("X-Accel-Buffering %q, want no", got)
		}
	}
}
