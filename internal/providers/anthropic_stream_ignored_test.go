package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A proxy in front of the Messages API that ignores stream:true answers a
// streamed call with the whole message JSON (Content-Type
// application/json). The SSE decoder found no event in it, and the billed
// answer was discarded as stream_cut "after 0 events". It is read and judged
// as an unstreamed answer now, as the OpenAI-compatible adapter reads a
// whole chat.completion on a stream; onDelta sees its text as one delta.
func TestAnthropicStreamAnsweredWithWholeMessage(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "the whole answer", Model: "claude-test", InputTokens: 11, OutputTokens: 4,
		IgnoreStream: true}))
	var deltas []string
	resp, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = true }).
		CompleteStream(context.Background(), testRequest(), func(d string) { deltas = append(deltas, d) })
	if err != nil {
		e, _ := AsError(err)
		t.Fatalf("a whole message on a streamed call discarded: %v (kind %s)", err, e.Kind)
	}
	if resp.Content != "the whole answer" || resp.FinishReason != "stop" || resp.ResponseID != "msg_fake1" || resp.Model != "claude-test" {
		t.Fatalf("response %+v", resp)
	}
	if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 4 || resp.Usage.Estimated {
		t.Fatalf("usage %+v, want the message's 11 in, 4 out", resp.Usage)
	}
	if resp.FirstByte <= 0 {
		t.Fatalf("first byte %v", resp.FirstByte)
	}
	if strings.Join(deltas, "") != resp.Content {
		t.Fatalf("deltas %q", deltas)
	}
}

// Such a message is judged as an unstreamed one: without a stop_reason it is
// malformed_response, billed with its usage — not stream_cut. A JSON object
// that is neither a message nor an error object stays a stream without
// events.
func TestAnthropicStreamAnsweredWithWholeMessageJudged(t *testing.T) {
	for _, tc := range []struct {
		body string
		kind Kind
	}{
		{`{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"half"}],"stop_reason":null,"usage":{"input_tokens":6,"output_tokens":2}}`, KindMalformedResponse},
		{`{"status":"ok"}`, KindStreamCut},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, tc.body)
		})
		_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != tc.kind || !e.Received {
			t.Errorf("%s: %s received=%v (%s), want %s received", tc.body, e.Kind, e.Received, e.Message, tc.kind)
		}
		if tc.kind == KindMalformedResponse && (e.Usage == nil || e.Usage.PromptTokens != 6 || e.Usage.CompletionTokens != 2 || e.ResponseID != "msg_2") {
			t.Errorf("%s: usage %+v id %q, want the message's billed 6 in, 2 out", tc.body, e.Usage, e.ResponseID)
		}
	}
}
