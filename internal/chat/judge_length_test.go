package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
)

// A reasoning model given a small max_completion_tokens spends it all on
// reasoning and answers content "" with finish_reason "length"; OpenAI
// answers that 200. The cause is the caller's limit, not the target's health:
// Judge refused it with the rule "empty", which ProviderRule counts against
// the target's breaker — one tenant's small limit opened a route's breakers
// for every tenant, and the caller got 502. It is accepted now, as OpenAI
// answers it. Found by review.
func TestJudgeAcceptsAnEmptyAnswerCutByTheCallersLimit(t *testing.T) {
	in := &Input{Messages: []providers.Message{{Role: "user", Content: "think hard"}}, MaxTokens: 16}
	resp := &providers.Response{Content: "", FinishReason: "length", Model: "o4-mini",
		Usage: providers.Usage{PromptTokens: 10, CompletionTokens: 16, TotalTokens: 26}}
	raw, violations := Judge(in, nil, "01a238f0-dcd8-7d52-924d-2d589cb4ac7f", resp)
	if len(violations) > 0 {
		t.Fatalf("empty answer cut by the caller's max_tokens refused (rule %q, the provider's: %v): %s",
			violations[0].Rule, ProviderRule(violations[0].Rule), violations[0].Message)
	}
	c, err := DecodeCompletion(raw)
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Choices[0]; ch.Message.Content == nil || *ch.Message.Content != "" || ch.FinishReason != "length" {
		t.Errorf("completion %s: want content \"\" and finish_reason \"length\", as OpenAI answers", raw)
	}
	// Whitespace is as empty.
	resp.Content = " \n"
	if _, violations := Judge(in, nil, "j", resp); len(violations) > 0 {
		t.Errorf("whitespace-only answer at length refused: %v", violations)
	}
	// An empty answer that says it is whole is still the provider's failure.
	for _, fr := range []string{"stop", ""} {
		resp := &providers.Response{Content: "", FinishReason: fr}
		if _, v := Judge(in, nil, "j", resp); len(v) == 0 || v[0].Rule != "empty" || !ProviderRule(v[0].Rule) {
			t.Errorf("empty answer with finish_reason %q: %v, want the provider's rule \"empty\"", fr, v)
		}
	}
}

// With a response_format, an empty answer cut at the caller's limit misses
// the caller's own contract, as any answer cut short does: refused (the job
// fails over, then fails), but not counted against the target's breaker.
func TestJudgeEmptyAnswerAtLengthWithResponseFormatIsTheCallers(t *testing.T) {
	schema := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r",
		Schema: json.RawMessage(`{"type":"object","required":["a"]}`)}}}
	v, err := schema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	cases := []struct {
		name string
		in   *Input
		v    *contract.Validator
	}{{"json_schema", schema, v}, {"json_object", object, nil}}
	for _, c := range cases {
		for _, content := range []string{"", `{"a":`} {
			_, violations := Judge(c.in, c.v, "j", &providers.Response{Content: content, FinishReason: "length"})
			if len(violations) == 0 {
				t.Errorf("%s, answer %q at length: accepted, want it refused as missing the caller's format", c.name, content)
				continue
			}
			if ProviderRule(violations[0].Rule) {
				t.Errorf("%s, answer %q at length: rule %q counts against the target's breaker", c.name, content, violations[0].Rule)
			}
		}
	}
}
