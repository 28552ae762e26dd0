package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// An OpenAI conversation may end with an assistant message; the Messages API
// takes it as a prefill (the answer continues it) and refuses one whose text
// ends with whitespace (400 invalid_request_error "messages: final assistant
// content cannot end with trailing whitespace"). The adapter sent it as it
// was: a request every OpenAI-compatible target takes stopped as the
// caller's bad request. The final assistant text's trailing whitespace is
// trimmed; an assistant message earlier in the conversation is sent as it
// is. Found by review.
func TestAnthropicFinalAssistantTrailingWhitespaceTrimmed(t *testing.T) {
	var sent struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&sent)
		last := sent.Messages[len(sent.Messages)-1]
		if last.Role == "assistant" {
			if txt := last.Content[len(last.Content)-1].Text; txt != strings.TrimRight(txt, " \t\n\r") {
				anthReal400(w, "messages: final assistant content cannot end with trailing whitespace")
				return
			}
		}
		anthOK(w)
	})
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := testRequest()
	req.Messages = append(req.Messages,
		Message{Role: "assistant", Content: "Which format? \n"},
		Message{Role: "user", Content: "JSON"},
		Message{Role: "assistant", Content: "Sure! Here it is:\n\t "})
	if _, err := p.Complete(context.Background(), req); err != nil {
		e := mustError(t, err)
		t.Fatalf("final assistant text with trailing whitespace sent as is: %s fault %s action %s: %v", e.Kind, e.Fault, e.Action, e)
	}
	var texts []string
	for _, m := range sent.Messages {
		texts = append(texts, m.Role+":"+m.Content[0].Text)
	}
	want := []string{"user:hi", "assistant:Which format? \n", "user:JSON", "assistant:Sure! Here it is:"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("sent %q, want %q", texts, want)
	}
}
