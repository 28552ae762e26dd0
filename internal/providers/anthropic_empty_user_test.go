package providers

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// An empty user message ("", which the chat API accepts and sends to
// OpenAI-compatible targets) was left out of the request sent to Anthropic:
// a conversation whose last user message is empty ended on the assistant's
// turn, which the Messages API takes as a prefill and continues, so the
// caller got the rest of the previous answer as a reply; an empty user turn
// between two assistant turns joined them into one. The Messages API
// refuses an empty or whitespace-only text block, and leaving such a turn
// out changes the conversation: it is refused before sending, as the
// request's bad_request (the target's breaker does not count it), failed
// over to a target that takes it, with a message naming the message and
// what to do. Found by review.
func TestAnthropicBlankUserTurnRefused(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	for _, c := range []struct {
		name     string
		messages []Message
		want     string // in the message
	}{{
		name:     "empty last user turn",
		messages: []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: ""}},
		want:     "messages[2]",
	}, {
		name:     "whitespace-only last user turn",
		messages: []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: " \n"}},
		want:     "messages[2]",
	}, {
		name: "empty user turn between assistant turns",
		messages: []Message{
			{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "system", Content: "s"},
			{Role: "user", Content: ""}, {Role: "assistant", Content: "c"}, {Role: "user", Content: "d"},
		},
		want: "messages[3]",
	}, {
		name:     "empty user turn alone",
		messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: ""}},
		want:     "messages[1]",
	}, {
		name:     "empty first user turn before the assistant's",
		messages: []Message{{Role: "user", Content: ""}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}},
		want:     "messages[0]",
	}} {
		for _, stream := range []bool{false, true} {
			req := &Request{Messages: c.messages}
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			e := mustError(t, err)
			if e.Kind != KindBadRequest || e.Fault != FaultCaller || e.Action != ActionFailover {
				t.Errorf("%s (stream %v): %v (action %s), want a bad_request failed over", c.name, stream, err, e.Action)
			}
			if !strings.Contains(e.Message, c.want) || !strings.Contains(e.Message, "give it some text") {
				t.Errorf("%s (stream %v): message %q does not name %s and what to do", c.name, stream, e.Message, c.want)
			}
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// An empty user message whose turn holds something else (another user
// message, a tool result) is left out: the turn stays, and the
// conversation with it.
func TestAnthropicEmptyUserTextBesideOtherContentLeftOut(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := &Request{Messages: []Message{{Role: "user", Content: ""}, {Role: "user", Content: "hi"}}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	msgs, _ := rs[len(rs)-1].Body["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages sent: %v, want one user turn", msgs)
	}
	content, _ := msgs[0].(map[string]any)["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != "hi" {
		t.Fatalf("user turn sent: %v, want the text \"hi\" alone", content)
	}
}
