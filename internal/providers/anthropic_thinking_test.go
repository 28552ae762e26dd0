package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Anthropic-compatible endpoints of reasoning models (MiniMax-M2's, DeepSeek's
// and Kimi's /anthropic APIs; Claude with extended thinking) stream the
// model's reasoning as a "thinking" content block of thinking_delta events
// before the text. The OpenAI adapter counts a stream's reasoning as part of
// what was generated (streamAcc.partial: "the provider generated and billed
// it as output"), and docs/chat.md says the router's estimates of a cut
// stream's usage count the reasoning as output. The Anthropic adapter drops
// thinking deltas: a stream cut (or a hedge loser cancelled) during a long
// thinking block carries no Partial, so provisionalUsage cannot raise
// message_start's provisional output_tokens of 1 — the attempt, billed for
// every reasoning token, is costed at one output token (lost_cost_usd, SPEC §18).
func TestAnthropicCutThinkingStreamCountsTheReasoning(t *testing.T) {
	thought := strings.Repeat("Let me work through this step by step. ", 50)
	evs := []string{
		`{"type":"message_start","message":{"id":"msg_think","type":"message","role":"assistant","model":"MiniMax-M2","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	}
	for i := 0; i < 10; i++ {
		evs = append(evs, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+thought[i*len(thought)/10:(i+1)*len(thought)/10]+`"}}`)
	}
	// The body ends here: the stream is cut during the thinking block.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { anthSSE(w, evs...) }))
	defer srv.Close()
	_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindStreamCut {
		t.Fatalf("kind %s (%s), want stream_cut", e.Kind, e.Message)
	}
	if e.Partial != thought {
		t.Fatalf("a stream cut after %d bytes of thinking carries Partial %q: the reasoning the provider generated and billed is not counted (usage %+v)",
			len(thought), e.Partial, e.Usage)
	}
}
