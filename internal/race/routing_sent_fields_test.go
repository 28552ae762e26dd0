package race

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// An assistant message's refusal is sent (OpenAI's "refusal", Anthropic's
// text block) and a caller may supply one as chat history: the window check
// counted neither it nor its bytes, so a request of any size passed it by
// putting its bulk there. Found by review.
func TestContextWindowCountsAssistantRefusal(t *testing.T) {
	msgs := []providers.Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", Refusal: strings.Repeat("I cannot help with that request. ", 2000)}, // ~14k tokens
		{Role: "user", Content: "again"},
	}
	r := &Runner{cfg: Config{Targets: map[string]*Target{"p": {Model: "gpt-4o", ContextWindow: 4096}}}}
	d := r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, maxTokens: 100})[0]
	if d.Eligible || !strings.HasPrefix(d.Reason, ReasonContextWindow) {
		t.Fatalf("a prompt of ~14,000 tokens (in a refusal) was found to fit a 4,096-token window: %+v", d)
	}
}

// A json_schema format's description and name go with every call
// (response_format.json_schema.description, .name): counted too.
func TestContextWindowCountsResponseFormatDescription(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "hi"}}
	for name, format := range map[string]*providers.ResponseFormat{
		"description": {Type: "json_schema", Name: "r", Schema: []byte(`{"type":"object"}`),
			Description: strings.Repeat("Describe the answer in full detail please. ", 2000)}, // ~16k tokens; the name below ~7k
		"name": {Type: "json_schema", Name: strings.Repeat("0123456789", 2000), Schema: []byte(`{"type":"object"}`)},
	} {
		r := &Runner{cfg: Config{Targets: map[string]*Target{"p": {Model: "gpt-4o", ContextWindow: 4096}}}}
		d := r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, maxTokens: 100, format: format})[0]
		if d.Eligible || !strings.HasPrefix(d.Reason, ReasonContextWindow) {
			t.Errorf("a request of thousands of tokens (in the response format's %s) was found to fit a 4,096-token window: %+v", name, d)
		}
	}
}
