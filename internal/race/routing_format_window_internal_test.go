package race

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// The output schema of a json_schema response format goes with every call,
// and providers that implement structured output through the prompt bill it
// as input: the context-window check counted only the messages, so a prompt
// near the window's edge passed it and was refused by the provider. Found by
// review.
func TestContextWindowCountsTheResponseSchema(t *testing.T) {
	var props []string
	for i := range 200 {
		props = append(props, `"field_`+strings.Repeat("x", i%7)+string(rune('a'+i%26))+`":{"type":"string","description":"one field of the extracted record, copied exactly"}`)
	}
	schema := []byte(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "Extract the record as JSON."}},
		format: &providers.ResponseFormat{Type: "json_schema", Name: "p", Schema: schema}}
	n, _ := tokens.CountMessages(tokens.O200kBase, counted(sp))
	s, _ := tokens.CountText(tokens.O200kBase, string(schema))
	if n < s {
		t.Fatalf("the window check counts %d tokens; the schema sent with the request alone is %d", n, s)
	}
}

// A chat request's schema is the caller's text, perhaps indented; the
// adapters send it compact, and that is what is counted (and what byteBound
// bounds), with the tools beside it.
func TestContextWindowCountsTheCompactSchemaAndTheTools(t *testing.T) {
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "hi"}},
		tools:  []byte(`[{"type":"function","function":{"name":"f"}}]`),
		format: &providers.ResponseFormat{Type: "json_schema", Name: "p", Schema: []byte("{\n  \"type\": \"object\"\n}")}}
	got := counted(sp)
	if len(got) != 3 || got[1].Content != string(sp.tools) || got[2].Content != `{"type":"object"}` {
		t.Fatalf("counted %q, want the message, the tools and the compact schema", got)
	}
	if len(sp.msgs) != 1 {
		t.Fatalf("counted changed the spec's messages: %q", sp.msgs)
	}
}

// A prompt's schema text is made once at load (spec.formatText): counted,
// on every prompt job's routing path, uses it instead of compacting the
// schema again, allocating only the longer message list.
func TestCountedUsesThePromptsSchemaText(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "hi"}},
		format: &providers.ResponseFormat{Type: "json_schema", Name: "p", Schema: schema}, formatText: string(schema)}
	if got := counted(sp); len(got) != 2 || got[1].Content != string(schema) {
		t.Fatalf("counted %q, want the message and the schema", got)
	}
	if a := testing.AllocsPerRun(100, func() { _ = counted(sp) }); a > 1 {
		t.Fatalf("counted allocates %v times for a prompt's schema, want 1 (the message list)", a)
	}
}

// The Anthropic adapter appends an instruction to the system prompt for
// json_object, which the provider counts.
func TestContextWindowCountsTheJSONObjectInstruction(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "hi"}}
	plain, _ := tokens.CountMessages(tokens.Cl100kBase, counted(&spec{msgs: msgs}))
	object, _ := tokens.CountMessages(tokens.Cl100kBase, counted(&spec{msgs: msgs, format: &providers.ResponseFormat{Type: "json_object"}}))
	if object-plain < 10 {
		t.Fatalf("json_object adds %d tokens to the count, want the instruction's (about a dozen)", object-plain)
	}
}

// Without tools or a format, counted is on every job's routing path: it
// returns the messages themselves.
func TestCountedAllocatesNothingWithoutToolsOrFormat(t *testing.T) {
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: "hi"}}}
	if a := testing.AllocsPerRun(100, func() { _ = counted(sp) }); a != 0 {
		t.Fatalf("counted allocates %v times for a plain request", a)
	}
}

// A prompt job's spec carries the schema text the prompt made at load, so
// the path above is the one every /v1/jobs job with an output schema takes.
func TestPromptSpecCarriesTheSchemaText(t *testing.T) {
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("invoice", "")
	r := &Runner{cfg: Config{Prompts: set}}
	sp, err := r.specFor(&store.Job{Operation: "invoice", Input: json.RawMessage(`{"text":"INV-1"}`)}, &Route{})
	if err != nil {
		t.Fatal(err)
	}
	if sp.formatText == "" || sp.formatText != p.FormatText() {
		t.Fatalf("the invoice spec's schema text is %q, want the prompt's", sp.formatText)
	}
}
