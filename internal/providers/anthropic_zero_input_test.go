package providers

import (
	"context"
	"net/http"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// An Anthropic-compatible server whose usage says input_tokens 0 for a
// whole answer (message_start and message_delta alike, or a non-streamed
// message) said nothing of the prompt it received: the Messages API counts
// at least one input token for every request. Taken as the provider's own
// figures, the answer was recorded and priced with no input cost, and the
// race, which estimates only an answer with no usage (answerUsage), kept
// them. The answer now carries no usage, so that the race estimates the
// prompt and the answer and marks them estimated.
func TestAnthropicWholeAnswerZeroInputTokensCarriesNoUsage(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "an answer of some length", InputTokens: 0, OutputTokens: 7}))
	for _, stream := range []bool{true, false} {
		resp, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if resp.Usage != (Usage{}) {
			t.Errorf("stream=%v: usage %+v claims the provider billed a prompt of 0 tokens; want none, for the router to estimate", stream, resp.Usage)
		}
		if resp.Content != "an answer of some length" {
			t.Errorf("stream=%v: content %q", stream, resp.Content)
		}
	}
}

// A reported input count — plain input tokens, or only cache reads or
// writes — is kept as Anthropic's, as before.
func TestAnthropicWholeAnswerReportedInputKept(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: 9, OutputTokens: 3}))
	for _, stream := range []bool{true, false} {
		resp, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if resp.Usage.PromptTokens != 9 || resp.Usage.CompletionTokens != 3 || resp.Usage.Estimated {
			t.Errorf("stream=%v: usage %+v, want Anthropic's 9 in, 3 out", stream, resp.Usage)
		}
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_read_input_tokens":40,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cached"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`)
	})
	resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != 40 || resp.Usage.PromptTokensDetails.CachedTokens != 40 || resp.Usage.CompletionTokens != 2 {
		t.Errorf("usage %+v, want the 40 cache-read input tokens and 2 output tokens reported", resp.Usage)
	}
}
