package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

const sig = `{"google":{"thought_signature":"SIG123"}}`

// streamedToolCalls streams the tool-call deltas (each a JSON array of
// tool_calls) and finish_reason tool_calls, and returns the adapter's
// Response.ToolCalls as they are.
func streamedToolCalls(t *testing.T, deltas ...string) string {
	t.Helper()
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		for i, d := range deltas {
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{`+role+`"tool_calls":`+d+`},"finish_reason":null}]}`)
		}
		sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	return string(resp.ToolCalls)
}

// Gemini 3 sends each tool call's thought signature in extra_content, and
// refuses a next turn without it: the streamed call keeps it, whether it
// comes with the call's first delta or in a delta of its own after the call
// began (with or without the call's index, as Gemini sends none), the last
// one if it comes twice; each call keeps its own.
func TestStreamToolCallKeepsExtraContent(t *testing.T) {
	for _, c := range []struct {
		name   string
		deltas []string
		want   string
	}{{
		name:   "with the call",
		deltas: []string{`[{"extra_content":` + sig + `,"function":{"arguments":"{}","name":"f"},"id":"call_1","type":"function"}]`},
		want:   `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":` + sig + `}]`,
	}, {
		name: "metadata-only delta after the call began",
		deltas: []string{
			`[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]`,
			`[{"index":0,"extra_content":` + sig + `}]`,
			`[{"index":0,"function":{"arguments":":1}"}}]`,
		},
		want: `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"extra_content":` + sig + `}]`,
	}, {
		name: "metadata-only delta without an index",
		deltas: []string{
			`[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
			`[{"extra_content":` + sig + `}]`,
		},
		want: `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":` + sig + `}]`,
	}, {
		name: "the last one wins, each call its own",
		deltas: []string{
			`[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"v":1}}]`,
			`[{"index":1,"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]`,
			`[{"index":0,"extra_content":{"v":2}},{"index":1,"extra_content":{"v":3}}]`,
		},
		want: `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"v":2}},` +
			`{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"},"extra_content":{"v":3}}]`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			if got := streamedToolCalls(t, c.deltas...); got != c.want {
				t.Fatalf("tool calls\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// A call Gemini sends without an id gets one from the router (nameToolCalls)
// and keeps its extra_content.
func TestStreamToolCallWithoutIDKeepsExtraContent(t *testing.T) {
	got := streamedToolCalls(t, `[{"extra_content":`+sig+`,"function":{"arguments":"{}","name":"f"},"type":"function"}]`)
	var calls []struct {
		ID           string          `json:"id"`
		ExtraContent json.RawMessage `json:"extra_content"`
	}
	if err := json.Unmarshal([]byte(got), &calls); err != nil || len(calls) != 1 || !strings.HasPrefix(calls[0].ID, "call_") || string(calls[0].ExtraContent) != sig {
		t.Fatalf("tool calls %s (%v): want one with a router id and its extra_content", got, err)
	}
}

// A call without extra_content is returned byte for byte as before: no
// extra_content member, null or empty; one that is null, or larger than
// maxExtraContent, is not kept; a content token that names "extra_content"
// changes nothing.
func TestStreamToolCallWithoutExtraContentUnchanged(t *testing.T) {
	want := `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`
	for name, d := range map[string]string{
		"none":      `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
		"null":      `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":null}]`,
		"oversized": `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":"` + strings.Repeat("x", maxExtraContent) + `"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			if got := streamedToolCalls(t, d); got != want {
				t.Fatalf("tool calls\n%s\nwant\n%s", got, want)
			}
		})
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"\"extra_content\""},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, "[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if err != nil || string(resp.ToolCalls) != want || resp.Content != `"extra_content"` {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

// The non-streamed answer's tool calls keep their extra_content when the
// body is at hand (responseBody), by position; without it (or one without
// extra_content) they are as before.
func TestAnswerToolCallKeepsExtraContent(t *testing.T) {
	body := []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},` +
		`{"extra_content":` + sig + `,"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	p := newTestAdapter(t, "http://unused.invalid", nil)
	plain := `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]`
	for _, c := range []struct {
		body []byte
		want string
	}{
		{body, `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"},"extra_content":` + sig + `}]`},
		{nil, plain},
	} {
		out, err := p.responseBody(c.body, resp.ID, resp.Model, resp.Created, resp.Choices, resp.Usage)
		if err != nil || string(out.ToolCalls) != c.want {
			t.Fatalf("tool calls %s (%v), want %s", out.ToolCalls, err, c.want)
		}
	}
}
