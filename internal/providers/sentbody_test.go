package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// answeringCapture is a provider that records each request's body and
// answers plain and streamed calls with a minimal completion.
func answeringCapture(t *testing.T) (*rawCapture, string) {
	t.Helper()
	c := &rawCapture{}
	url := c.server(t, func(w http.ResponseWriter, stream bool) {
		if stream {
			startStream(w)
			fmt.Fprint(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completionBody)
	})
	return c, url
}

// sentBody sends req through p over real HTTP, streamed or not, and returns
// the body the provider received and the one go-openai would have sent
// (json.Marshal of the whole request).
func sentBody(t *testing.T, p *OpenAI, c *rawCapture, req *Request, stream bool) (got, want []byte) {
	t.Helper()
	creq, perr := p.chatRequest(req)
	if perr != nil {
		t.Fatal(perr)
	}
	var err error
	if stream {
		creq.Stream, creq.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
		_, err = p.CompleteStream(context.Background(), req, nil)
	} else {
		_, err = p.Complete(context.Background(), req)
	}
	if err != nil {
		t.Fatalf("stream %v: %v", stream, err)
	}
	want, _ = json.Marshal(creq)
	return c.last(t), want
}
