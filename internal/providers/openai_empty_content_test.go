package providers

import (
	"context"
	"encoding/json"
	"testing"
)

// A tool that returned nothing is answered with "content": "", and a user
// may send an empty message: valid OpenAI requests. The adapter sent such a
// message without its content (go-openai's omitempty, copied by the body
// writer); OpenAI requires content on every message but an assistant's and
// answered 400, failing the job. Every message but an assistant's now keeps
// its content, on the adapter's own body writer (plain request) and on the
// encoding/json one (a request with tools), plain and streamed. An assistant
// turn that only called tools still goes without content. Found by review.
func TestOpenAIKeepsEmptyContent(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	plain := testRequest()
	plain.Messages = append(plain.Messages, Message{Role: "assistant", Content: "ok"}, Message{Role: "user", Content: ""})
	tools := toolRequest()
	tools.Messages[len(tools.Messages)-2].Content = "" // the tool's result: empty
	for name, req := range map[string]*Request{"plain": plain, "with tools": tools} {
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("%s, stream %v: %v", name, stream, err)
			}
			var got struct {
				Messages []map[string]json.RawMessage `json:"messages"`
			}
			body := c.last(t)
			if err := json.Unmarshal(body, &got); err != nil || len(got.Messages) != len(req.Messages) {
				t.Fatalf("%s, stream %v: body %s (%v)", name, stream, body, err)
			}
			for i, m := range got.Messages {
				content, ok := m["content"]
				switch {
				case req.Messages[i].Role != "assistant" && (!ok || string(content) != jsonString(req.Messages[i].Content)):
					t.Errorf("%s, stream %v: messages[%d] (role %s) sent with content %s, want %q: %s",
						name, stream, i, m["role"], content, req.Messages[i].Content, body)
				case req.Messages[i].Role == "assistant" && req.Messages[i].Content == "" && ok:
					t.Errorf("%s, stream %v: the assistant's tool-call turn sent with content %s", name, stream, content)
				}
			}
		}
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
