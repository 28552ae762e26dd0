package providers

import (
	"context"
	"net/http"
	"testing"
)

// An Anthropic-compatible server that reports the input tokens only at the
// end (message_start says input_tokens 0, as SGLang's and mlx-node's
// /v1/messages did) and whose stream is then cut: the error carried
// message_start's usage as billed — 0 prompt tokens — so the race took it
// as the provider's figure (estimatedUsage steps aside for an error with
// usage) and the prompt the provider received cost nothing. Such a usage
// says nothing of the prompt: the error carries none, and the part of the
// answer that came, so that the race estimates both. Found by review.
func TestAnthropicCutStreamZeroInputStartUsage(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"part of an answer"}}`)
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	req := testRequest()
	req.Messages[1].Content = "a long prompt the provider received and billed"
	_, err := p.Complete(context.Background(), req)
	pe, ok := AsError(err)
	if !ok || pe.Kind != KindStreamCut {
		t.Fatalf("err %v, want stream_cut", err)
	}
	if pe.Usage != nil && pe.Usage.PromptTokens == 0 {
		t.Errorf("the cut stream's error claims the provider billed %+v: a prompt of 0 tokens, recorded as billed instead of estimated", *pe.Usage)
	}
	if pe.Partial != "part of an answer" {
		t.Errorf("partial %q, want the text that came", pe.Partial)
	}
}
