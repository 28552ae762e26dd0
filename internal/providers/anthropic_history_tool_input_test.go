package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// A history tool call whose arguments are JSON but not an object ("[]",
// "null", "1": OpenAI takes any string, and chat.Normalize accepts any JSON)
// was sent as a tool_use input that is not an object, which the Messages API
// refuses with a 400 ("Input should be a valid dictionary"): the job stopped
// as the caller's bad request though the route's OpenAI-compatible targets
// take it. null is sent as {} (no arguments), any other non-object wrapped
// as {"value": …}; an object is sent as it is. Found by review.
func TestAnthropicHistoryToolInputIsAnObject(t *testing.T) {
	for args, want := range map[string]string{
		"[]":             `{"value":[]}`,
		"null":           `{}`,
		"1":              `{"value":1}`,
		`"text"`:         `{"value":"text"}`,
		" [1, 2] ":       `{"value":[1,2]}`,
		`{"a": [1]}`:     `{"a":[1]}`,
		"":               `{}`,
		`  {"b":true}  `: `{"b":true}`,
	} {
		var sent struct {
			Messages []struct {
				Content []map[string]json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewDecoder(r.Body).Decode(&sent)
			anthOK(w)
		})
		p := newAnthropicAdapter(t, srv.URL, nil)
		req := testRequest()
		req.Messages = append(req.Messages,
			Message{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"f","arguments":` + strconv.Quote(args) + `}}]`)},
			Message{Role: "tool", ToolCallID: "call_1", Content: "ok"})
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range sent.Messages {
			for _, b := range m.Content {
				if string(b["type"]) == `"tool_use"` {
					found = true
					if string(b["input"]) != want {
						t.Errorf("arguments %q: tool_use input sent as %s, want %s", args, b["input"], want)
					}
				}
			}
		}
		if !found {
			t.Errorf("arguments %q: no tool_use sent", args)
		}
	}
}
