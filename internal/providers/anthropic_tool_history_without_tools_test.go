package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// anthropicToolsRequired answers as the Messages API answers a request whose
// messages hold tool_use or tool_result blocks but which defines no tools
// (400 invalid_request_error "Requests which include `tool_use` or
// `tool_result` blocks must define tools."); any other request is passed
// to the fake.
func anthropicToolsRequired(t *testing.T, fake *anthropicfake.Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Tools    []json.RawMessage `json:"tools"`
			Messages []struct {
				Content []struct {
					Type string `json:"type"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("body: %v", err)
		}
		toolBlocks := false
		for _, m := range body.Messages {
			for _, c := range m.Content {
				toolBlocks = toolBlocks || c.Type == "tool_use" || c.Type == "tool_result"
			}
		}
		if toolBlocks && len(body.Tools) == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"Requests which include `+
				"`tool_use` or `tool_result`"+` blocks must define tools."},"request_id":"req_x"}`)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, fake.URL+r.URL.Path, strings.NewReader(string(raw)))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}
}

// An OpenAI-shaped conversation may carry an earlier tool loop (assistant
// tool_calls and the tool messages that answer them) in a request that
// offers no tools — the final "summarise what you found" turn of an agent,
// a compaction, a replayed transcript: OpenAI and every OpenAI-compatible
// target take it, and chat accepts it (docs/chat.md: tool_calls and tool
// messages "are passed through too"). The Anthropic adapter sends the
// history's tool_use and tool_result blocks without any tools, which the
// Messages API refuses with a 400 invalid_request_error; classified as the
// caller's bad_request, the job stops on the Anthropic target without
// trying the route's other targets. Either the adapter sends a request
// Anthropic takes (for example the history's tools declared, with
// tool_choice none, since the caller offered none), or the refusal fails
// over.
func TestAnthropicToolHistoryWithoutTools(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "It is sunny in Paris.", InputTokens: 30, OutputTokens: 6}))
	srv := newFakeServer(t, anthropicToolsRequired(t, fake))
	req := &Request{Messages: []Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]`)},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
		{Role: "user", Content: "Summarise what you found in one sentence."},
	}}
	for _, stream := range []bool{false, true} {
		resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), req)
		if err == nil {
			if resp.Content != "It is sunny in Paris." {
				t.Errorf("stream=%v: content %q", stream, resp.Content)
			}
			continue
		}
		e := mustError(t, err)
		if e.Action != ActionFailover {
			t.Errorf("stream=%v: a tool history without tools is refused by Anthropic and the job stops there: %s/%s/%s %q",
				stream, e.Kind, e.Action, e.Fault, e.Message)
		}
	}
}
