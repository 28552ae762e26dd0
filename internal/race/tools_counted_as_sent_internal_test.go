package race

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/tokens"
)

// prettyAndCompact is v indented as a caller's JSON library may write it,
// and its compact text: what the adapters send.
func prettyAndCompact(t *testing.T, v any) (pretty, compact []byte) {
	t.Helper()
	pretty, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, pretty); err != nil {
		t.Fatal(err)
	}
	return pretty, b.Bytes()
}

// customerTools is twenty function tools with a few parameters each.
func customerTools() []map[string]any {
	var defs []map[string]any
	for i := range 20 {
		defs = append(defs, map[string]any{"type": "function", "function": map[string]any{
			"name": fmt.Sprintf("lookup_%d", i), "description": "Look up a customer record by id.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"id":     map[string]any{"type": "string", "description": "customer id"},
				"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			}, "required": []string{"id"}, "additionalProperties": false}}})
	}
	return defs
}

// Pretty-printed tools are sent compact (the adapters re-encode them): a
// request that fits the window as sent must be routed there, not refused as
// too long (SPEC §8). Found by review: tools were counted as written.
func TestPrettyPrintedToolsAreCountedAsSentForTheWindow(t *testing.T) {
	pretty, compact := prettyAndCompact(t, customerTools())
	msgs := []providers.Message{{Role: "user", Content: strings.Repeat("Summarise the account history please. ", 50)}}
	sent, err := tokens.CountMessages(tokens.O200kBase, tokens.Counted(msgs, nil, "", compact))
	if err != nil {
		t.Fatal(err)
	}
	window := sent + 100
	r := &Runner{cfg: Config{Targets: map[string]*Target{"openai": {Model: "gpt-4o", ContextWindow: window}}}}
	sp := &spec{model: "gpt-4o", maxTokens: 100, msgs: msgs, tools: pretty}
	if got := r.decide(&Route{Providers: []string{"openai"}}, sp); !got[0].Eligible {
		t.Errorf("the request fits as sent (%d tokens, window %d), yet: %+v", sent, window, got[0])
	}
	// One token more than the window holds is still refused.
	r.cfg.Targets["openai"].ContextWindow = sent + 99
	if got := r.decide(&Route{Providers: []string{"openai"}}, sp); got[0].Eligible || got[0].Cause != CauseContextWindow {
		t.Errorf("the request needs one token more than the window holds, yet: %+v", got[0])
	}
}

// An assistant turn's pretty-printed tool calls are sent compact too.
func TestPrettyPrintedToolCallsAreCountedAsSentForTheWindow(t *testing.T) {
	var calls []map[string]any
	for i := range 30 {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": "lookup", "arguments": `{"id":"c-1"}`}})
	}
	pretty, compact := prettyAndCompact(t, calls)
	hist := func(tc []byte) []providers.Message {
		return []providers.Message{{Role: "user", Content: "Look up every customer."}, {Role: "assistant", ToolCalls: tc}}
	}
	sent, err := tokens.CountMessages(tokens.O200kBase, hist(compact))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{cfg: Config{Targets: map[string]*Target{"openai": {Model: "gpt-4o", ContextWindow: sent + 100}}}}
	sp := &spec{model: "gpt-4o", maxTokens: 100, msgs: hist(pretty)}
	if got := r.decide(&Route{Providers: []string{"openai"}}, sp); !got[0].Eligible {
		t.Errorf("the request fits as sent (%d tokens, window %d), yet: %+v", sent, sent+100, got[0])
	}
	if string(sp.msgs[1].ToolCalls) != string(pretty) {
		t.Error("routing changed the request's tool calls (they are kept as written for its fingerprint)")
	}
}

// The prompt cost of a hedge loser or a cut stream is estimated from the
// same count: pretty-printed tools and tool calls are billed as sent.
func TestPromptEstimateCountsToolsAndToolCallsAsSent(t *testing.T) {
	prettyTools, compactTools := prettyAndCompact(t, customerTools())
	prettyCalls, compactCalls := prettyAndCompact(t, []map[string]any{{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "lookup_1", "arguments": `{"id": "c-1"}`}}})
	req := func(tools, calls []byte) *spec {
		return &spec{model: "gpt-4o", tools: tools, msgs: []providers.Message{
			{Role: "user", Content: "Look up customer c-1."}, {Role: "assistant", ToolCalls: calls},
			{Role: "tool", ToolCallID: "call_1", Content: `{"name":"Ada"}`}}}
	}
	a := &store.Attempt{Model: "gpt-4o"}
	sent, ok := promptEstimate(&Target{}, req(compactTools, compactCalls), a)
	if !ok {
		t.Fatal("no estimate of the compact request")
	}
	if got, ok := promptEstimate(&Target{}, req(prettyTools, prettyCalls), a); !ok || got != sent {
		t.Errorf("a pretty-printed request's prompt is estimated at %d tokens (%v), the same request as sent at %d", got, ok, sent)
	}
}

// A chat job read back from its row (a job taken over from a replica that
// died holding it) has the text PostgreSQL's jsonb writes: a space after
// every colon and comma of its tools and tool calls, which the adapters do
// not send. The window check must come to the count it came to when the job
// was created from the request's compact encoding, or the job the API
// accepted fails for want of a provider whose window holds it.
func TestChatJobReadFromItsRowCountsToolsAsSent(t *testing.T) {
	db := testdb.New(t, store.Options{})
	_, tools := prettyAndCompact(t, customerTools())
	_, calls := prettyAndCompact(t, []map[string]any{{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "lookup_1", "arguments": `{"id":"c-1"}`}}})
	in := chat.Input{MaxTokens: 100, Tools: tools, Messages: []providers.Message{
		{Role: "user", Content: strings.Repeat("Summarise the account history please. ", 20)},
		{Role: "assistant", ToolCalls: calls}, {Role: "tool", ToolCallID: "call_1", Content: `{"name":"Ada"}`}}}
	created, err := json.Marshal(in) // as the API stores it
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := db.Pool.QueryRow(context.Background(), "SELECT $1::jsonb::text", string(created)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, `"type": "function"`) {
		t.Fatalf("jsonb wrote %.80s…: no spaces to count, the test proves nothing", stored)
	}
	route := &Route{Providers: []string{"openai"}}
	r := &Runner{cfg: Config{Targets: map[string]*Target{"openai": {Model: "gpt-4o"}}}}
	count := func(input string) int {
		t.Helper()
		sp, err := r.specFor(&store.Job{Operation: chat.Operation("default"), Input: json.RawMessage(input)}, route)
		if err != nil {
			t.Fatal(err)
		}
		n, err := tokens.CountMessages(tokens.O200kBase, counted(sp))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	sent := count(string(created))
	r.cfg.Targets["openai"].ContextWindow = sent + 100
	sp, err := r.specFor(&store.Job{Operation: chat.Operation("default"), Input: json.RawMessage(stored)}, route)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.decide(route, sp); !got[0].Eligible {
		t.Errorf("the job fits as sent (%d tokens + max_tokens 100, window %d), yet read from its row: %+v", sent, sent+100, got[0])
	}
}
