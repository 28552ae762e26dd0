package providers

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// OpenAI's allowed_tools tool_choice ({"type":"allowed_tools","allowed_tools":
// {"mode","tools"}}) has no counterpart in the Messages API: the adapter sends
// only the listed tools, with tool_choice auto or any as the mode says. It was
// refused as the caller's bad request, failing a request an OpenAI target of
// the same route took.
func TestAnthropicAllowedToolsSendsOnlyThoseTools(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "{}"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	for _, c := range []struct {
		mode string
		want map[string]any
	}{
		{"auto", map[string]any{"type": "auto"}},
		{"required", map[string]any{"type": "any"}},
	} {
		req := testRequest()
		req.Tools = json.RawMessage(`[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}},
			{"type":"function","function":{"name":"time","parameters":{"type":"object"}}},
			{"type":"function","function":{"name":"news","parameters":{"type":"object"}}}]`)
		req.ToolChoice = json.RawMessage(`{"type":"allowed_tools","allowed_tools":{"mode":"` + c.mode +
			`","tools":[{"type":"function","function":{"name":"news"}},{"type":"function","function":{"name":"weather"}}]}}`)
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("mode %s: %v", c.mode, err)
		}
		rs := srv.Requests()
		b := rs[len(rs)-1].Body
		if !reflect.DeepEqual(b["tool_choice"], c.want) {
			t.Errorf("mode %s: tool_choice %v, want %v", c.mode, b["tool_choice"], c.want)
		}
		var names []string
		for _, tool := range b["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		if !reflect.DeepEqual(names, []string{"weather", "news"}) {
			t.Errorf("mode %s: sent tools %v, want only the allowed ones in the request's order [weather news]", c.mode, names)
		}
	}
	req := testRequest()
	req.Tools = json.RawMessage(`[{"type":"function","function":{"name":"weather"}}]`)
	req.ToolChoice = json.RawMessage(`{"type":"allowed_tools","allowed_tools":{"mode":"sometimes","tools":[{"type":"function","function":{"name":"weather"}}]}}`)
	_, err := p.Complete(context.Background(), req)
	assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
}
