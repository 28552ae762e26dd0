package providers

import (
	"encoding/json"
	"strings"
	"testing"
)

// anthropicSchemaSentRC3 is the request body the Anthropic adapter builds
// for a json_schema response format with schema.
func anthropicSchemaSentRC3(t *testing.T, schema string) string {
	t.Helper()
	p := newAnthropicAdapter(t, "http://127.0.0.1:1", nil)
	params, e := p.messageParams(&Request{
		Messages:       []Message{{Role: "user", Content: "Answer in JSON"}},
		MaxTokens:      10,
		ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "x", Schema: []byte(schema)},
	})
	if e != nil {
		t.Fatal(e)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A json_schema response format reaches Anthropic re-encoded from a
// map[string]any decoded without UseNumber: a bound beyond 2^53 is rounded
// (minimum 9007199254740993 is sent as 9007199254740992), while the router
// validates the answer against the exact schema and OpenAI-compatible
// targets receive it verbatim (openai_request.go sends json.RawMessage). A
// model held to the rounded bound may answer 9007199254740992, which the
// router then refuses (schema.minimum): a wasted, billed attempt.
func TestAnthropicSchemaNumbersExact(t *testing.T) {
	body := anthropicSchemaSentRC3(t, `{"type":"object","properties":{"n":{"type":"integer","minimum":9007199254740993}},"required":["n"]}`)
	if !strings.Contains(body, "9007199254740993") {
		i := max(strings.Index(body, "minimum"), 0)
		t.Errorf("the schema sent to Anthropic lost the bound 9007199254740993: %s", body[i:min(len(body), i+40)])
	}
}

// docs/prompts.md: the self-contained schema "keeps the file's key order; it
// is both what providers receive and what the router validates against".
// Anthropic receives its properties in alphabetical order (Go map order), so
// a schema that puts "reasoning" before "answer" (to have the model reason
// first) is sent with "answer" first.
func TestAnthropicSchemaKeyOrderKept(t *testing.T) {
	body := anthropicSchemaSentRC3(t, `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"]}`)
	r, a := strings.Index(body, `"reasoning":{`), strings.Index(body, `"answer":{`)
	if r < 0 || a < 0 || r > a {
		t.Errorf("properties sent to Anthropic are not in the schema's order (reasoning, answer): %s", body[strings.Index(body, `"properties"`):])
	}
}

// A tool's parameters schema reached Anthropic through a map[string]any as
// the output schema did: a bound beyond 2^53 rounded, properties sorted.
func TestAnthropicToolSchemaSentAsWritten(t *testing.T) {
	p := newAnthropicAdapter(t, "http://127.0.0.1:1", nil)
	params, e := p.messageParams(&Request{
		Messages:  []Message{{Role: "user", Content: "go"}},
		MaxTokens: 10,
		Tools: json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{"type":"object",` +
			`"properties":{"reasoning":{"type":"string"},"n":{"type":"integer","maximum":9007199254740993}},"required":["reasoning","n"]}}}]`),
	})
	if e != nil {
		t.Fatal(e)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	if !strings.Contains(body, "9007199254740993") {
		t.Errorf("the tool schema sent to Anthropic lost the bound 9007199254740993: %s", body)
	}
	if r, n := strings.Index(body, `"reasoning":{`), strings.Index(body, `"n":{`); r < 0 || n < 0 || r > n {
		t.Errorf("tool properties sent to Anthropic are not in the schema's order (reasoning, n): %s", body)
	}
}

// A schema that is not a JSON object is still refused before sending, now
// that it is no longer decoded: the same schema goes to every target.
func TestAnthropicSchemaNotObjectRefused(t *testing.T) {
	p := newAnthropicAdapter(t, "http://127.0.0.1:1", nil)
	for _, schema := range []string{``, `[1]`, `{"type":`, ` "x"`} {
		_, e := p.messageParams(&Request{
			Messages:       []Message{{Role: "user", Content: "go"}},
			ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "x", Schema: []byte(schema)},
		})
		if e == nil || e.Kind != KindMisconfigured || e.Action != ActionStop || !strings.Contains(e.Message, "not a JSON object") {
			t.Errorf("schema %q: got %v; want a misconfiguration that stops the job", schema, e)
		}
	}
}
