package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A whole answer's thinking block (Claude with extended thinking, the
// /anthropic endpoints of reasoning models) reaches the caller as
// reasoning_content, streamed or not, as DeepSeek's reasoning does through
// the OpenAI adapter; the answer (what the contract judges) is the text
// alone. A stream cut after the thinking counts it in Error.Partial.
func TestAnthropicThinkingIsTheReasoningContent(t *testing.T) {
	const thought, text = "The ticket is about a refund; billing it is.", `{"category":"billing"}`
	for _, stream := range []bool{false, true} {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Thinking: thought, Text: text, InputTokens: 10, OutputTokens: 30}))
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		resp, err := p.Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if resp.ReasoningContent != thought || resp.Content != text {
			t.Errorf("stream %v: reasoning %q, content %q; want the thinking block as reasoning_content and the text as content", stream, resp.ReasoningContent, resp.Content)
		}
		if resp.Usage.CompletionTokens != 30 || resp.Usage.Estimated {
			t.Errorf("stream %v: usage %+v, want the provider's 30 output tokens", stream, resp.Usage)
		}
	}
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Thinking: thought, Text: text, InputTokens: 10, CutAfterText: true}))
	_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindStreamCut || !strings.HasPrefix(e.Partial, thought) {
		t.Errorf("cut after the thinking: kind %s, partial %q; want stream_cut with the thinking first", e.Kind, e.Partial)
	}
}

// A whole stream whose message_delta gives no output count is estimated
// from all it generated: the thinking (a content_block_start's own thinking
// text and its thinking_delta events) as well as the text. A
// redacted_thinking block has no text to count, and a signature_delta is no
// output.
func TestAnthropicUncountedStreamEstimatesItsThinking(t *testing.T) {
	start, delta := "First, ", strings.Repeat("think it through. ", 200)
	evs := []string{
		`{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","model":"MiniMax-M2","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"` + start + `","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"` + delta + `"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJlIHRoYXQgaXMgbm90IG91dHB1dA=="}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"ZW5jcnlwdGVkIHJlYXNvbmluZw=="}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hello world"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}`,
		`{"type":"message_stop"}`,
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
	resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.ReasoningContent != start+delta || resp.Content != "Hello world" {
		t.Fatalf("reasoning %q, content %q", resp.ReasoningContent, resp.Content)
	}
	n := (len(start+delta) + len("Hello world") + 3) / 4
	if want := (Usage{PromptTokens: 12, CompletionTokens: n, TotalTokens: 12 + n, Estimated: true}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v: the thinking the provider generated counts as output", resp.Usage, want)
	}
}
