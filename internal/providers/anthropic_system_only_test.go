package providers

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A conversation of a system message alone is valid for an OpenAI-compatible
// target but not for the Messages API: the adapter refused it with the
// default action of a bad request (stop), and on a route [claude, openai]
// the job ended though the next target would have answered. It is failed
// over, still the caller's request (bad_request, not counted against the
// target), and nothing is sent. Found by review.
func TestAnthropicSystemOnlyFailsOver(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	for _, stream := range []bool{false, true} {
		req := &Request{Messages: []Message{{Role: "system", Content: "Write a haiku about routers."}}}
		var err error
		if stream {
			_, err = p.CompleteStream(context.Background(), req, nil)
		} else {
			_, err = p.Complete(context.Background(), req)
		}
		e := mustError(t, err)
		if e.Kind != KindBadRequest || e.Fault != FaultCaller || e.Action != ActionFailover {
			t.Fatalf("stream %v: kind %s fault %s action %s, want a bad_request failed over", stream, e.Kind, e.Fault, e.Action)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
