package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
)

// docs/chat.md: "A provider's own members of a tool call pass through both
// ways ... the call comes back with it — streamed or not, and when the stored
// answer is replayed". The unstreamed answer sends the stored tool calls as
// they are; the stream decodes each call into map[string]any, so every JSON
// number in a provider's member becomes a float64 and is re-encoded: an
// integer above 2^53 changes value (9007199254740993 -> ...992). A caller
// that sends the call back (as Gemini requires for extra_content) sends
// different bytes than the provider gave.
func TestStreamedToolCallKeepsProviderNumbers(t *testing.T) {
	calls := `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},` +
		`"extra_content":{"google":{"thought_signature":"sig","seq":9007199254740993}}}]`
	c := &chat.Completion{ID: "chatcmpl-1", Object: "chat.completion", Created: 1700000000, Model: "m",
		Choices: []chat.Choice{{Message: chat.AssistantMessage{Role: "assistant", ToolCalls: json.RawMessage(calls)}, FinishReason: "tool_calls"}}}
	rec := httptest.NewRecorder()
	if err := writeStreamBody(rec, newStreamWrites(rec, time.Minute), c, false); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	for _, want := range []string{`"seq":9007199254740993`} {
		if !strings.Contains(body, want) {
			t.Errorf("streamed tool call lost %s of the provider's extra_content:\n%s", want, body)
		}
	}
}
