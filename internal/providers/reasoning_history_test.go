package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// An assistant turn's reasoning_content, sent back in the history, reaches
// an OpenAI-compatible provider with SendReasoningContent (DeepSeek's thinking
// mode refuses a tool loop without it), by both body writers (appendChatBody
// for a request without tools, chatBodyJSON with them), plain and streamed; a
// turn without it is sent without the member. A provider without the setting
// gets no reasoning_content at all: other OpenAI-compatible APIs refuse the
// unknown member (Mistral's 400, the caller's fault, not failed over). Found
// by review (rchat4 #1).
func TestOpenAISendsAssistantReasoningContent(t *testing.T) {
	const reasoning = "call get_weather for Oslo"
	c, url := answeringCapture(t)
	plain := testRequest()
	plain.Messages = append(plain.Messages, Message{Role: "assistant", Content: "ok", ReasoningContent: reasoning}, Message{Role: "user", Content: "and?"})
	tools := toolRequest()
	tools.Messages[len(tools.Messages)-3].ReasoningContent = reasoning // the assistant turn that called get_weather
	for _, send := range []bool{false, true} {
		p := newTestAdapter(t, url, func(cfg *OpenAIConfig) { cfg.SendReasoningContent = send })
		for name, req := range map[string]*Request{"plain": plain, "with tools": tools} {
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					_, err = p.CompleteStream(context.Background(), req, nil)
				} else {
					_, err = p.Complete(context.Background(), req)
				}
				if err != nil {
					t.Fatalf("send %v, %s, stream %v: %v", send, name, stream, err)
				}
				var got struct {
					Messages []map[string]any `json:"messages"`
				}
				body := c.last(t)
				if err := json.Unmarshal(body, &got); err != nil || len(got.Messages) != len(req.Messages) {
					t.Fatalf("send %v, %s, stream %v: body %s (%v)", send, name, stream, body, err)
				}
				for i, m := range got.Messages {
					sent, ok := m["reasoning_content"]
					want := req.Messages[i].ReasoningContent
					if !send {
						want = ""
					}
					if (want == "" && ok) || (want != "" && sent != want) {
						t.Errorf("send %v, %s, stream %v: messages[%d] sent with reasoning_content %v, want %q: %s", send, name, stream, i, sent, want, body)
					}
				}
			}
		}
	}
}

// The Anthropic adapter leaves an assistant turn's reasoning_content out: the
// Messages API takes earlier reasoning only as thinking blocks signed by
// Anthropic, which another provider's reasoning has not; the turn's text and
// tool calls are sent as they are.
func TestAnthropicLeavesOutReasoningContent(t *testing.T) {
	var body string
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		anthOK(w)
	})
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := toolRequest()
	req.Messages[len(req.Messages)-3].Content = "Looking it up."
	req.Messages[len(req.Messages)-3].ReasoningContent = "call get_weather for Oslo"
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "get_weather for Oslo") || strings.Contains(body, "thinking") {
		t.Fatalf("the reasoning reached Anthropic: %s", body)
	}
	if !strings.Contains(body, "Looking it up.") || !strings.Contains(body, `"tool_use"`) {
		t.Fatalf("the assistant turn's text or tool call is missing: %s", body)
	}
}
