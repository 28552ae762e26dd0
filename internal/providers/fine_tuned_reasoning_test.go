package providers

import (
	"context"
	"testing"
)

// A caller's max_completion_tokens (folded into Request.MaxTokens) reached a
// fine-tuned reasoning model (ft:o4-mini-…) as max_tokens, which OpenAI
// refuses for it as for its base model: go-openai's check knows reasoning
// models by their id's prefix, which a fine-tune's "ft:" (or a gateway's
// "openai/") hid. Such a model now gets max_completion_tokens and its
// temperature rules, as its base does. Found by review (rchat2 #3).
func TestFineTunedReasoningModelsGetMaxCompletionTokens(t *testing.T) {
	for _, model := range []string{"ft:o4-mini-2025-04-16:acme::abc123", "ft:o3-mini:acme::x1"} {
		url, bodies := bodyServer(t)
		p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Model = model })
		req := testRequest()
		req.MaxTokens = 500
		zero := float32(0)
		req.Temperature = &zero
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		body := <-bodies
		_, hasMax := body["max_tokens"]
		_, hasTemp := body["temperature"]
		if hasMax || body["max_completion_tokens"] != float64(500) || hasTemp {
			t.Errorf("%s: sent max_tokens %v, max_completion_tokens %v, temperature %v; want max_completion_tokens 500 only",
				model, body["max_tokens"], body["max_completion_tokens"], body["temperature"])
		}
	}
	// A gateway's prefixed model keeps the gateway's rules: its temperature is
	// sent, not refused before sending (rdiff48: openai/gpt-5-chat takes one).
	for _, model := range []string{"openai/gpt-5-chat", "openai/o4-mini"} {
		url, bodies := bodyServer(t)
		p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Model = model })
		req := testRequest()
		temp := float32(0.7)
		req.Temperature = &temp
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Errorf("%s with temperature 0.7: refused before sending: %v", model, err)
			continue
		}
		if body := <-bodies; body["temperature"] == nil {
			t.Errorf("%s: temperature not sent: %v", model, body)
		}
	}
	// A model that only contains a reasoning model's name is not one.
	url, bodies := bodyServer(t)
	p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Model = "ft:gpt-4o-mini-2024-07-18:acme::o4" })
	req := testRequest()
	req.MaxTokens = 500
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if body := <-bodies; body["max_tokens"] != float64(500) {
		t.Errorf("a fine-tuned gpt-4o-mini: sent %v, want max_tokens 500", body)
	}
}
