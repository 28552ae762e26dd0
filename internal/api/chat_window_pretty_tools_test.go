package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// A chat request whose pretty-printed tools fit the window as sent (the
// adapters send them compact) is sent, not answered 400
// context_length_exceeded: the window check counts tools as their compact
// text. Found by review: they were counted as written, indentation and all.
func TestChatWithPrettyPrintedToolsThatFitAsSentIsSent(t *testing.T) {
	var defs []map[string]any
	for i := range 20 {
		defs = append(defs, map[string]any{"type": "function", "function": map[string]any{
			"name": fmt.Sprintf("lookup_%d", i), "description": "Look up a customer record by id.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"id":     map[string]any{"type": "string", "description": "customer id"},
				"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}, "required": []string{"id"}}}})
	}
	pretty, err := json.MarshalIndent(defs, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, pretty); err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("Summarise the account history please. ", 20)
	enc, err := tokens.EncodingForModel("", "m1") // the primary's model in setup
	if err != nil {
		t.Fatal(err)
	}
	msgs := []providers.Message{{Role: "user", Content: content}}
	sent, err := tokens.CountMessages(enc, tokens.Counted(msgs, nil, "", compact.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	written, _ := tokens.CountMessages(enc, []providers.Message{msgs[0], {Content: string(pretty)}})
	const maxTokens = 50
	if written-sent < 100 {
		t.Fatalf("the indentation adds only %d tokens: the test proves nothing", written-sent)
	}
	b := setup(t, options{window: sent + maxTokens + 10})
	body := fmt.Sprintf(`{"model":"default","max_tokens":%d,"messages":[{"role":"user","content":%q}],"tools":%s}`,
		maxTokens, content, pretty)
	r := b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, body)
	if r.status != http.StatusOK {
		t.Fatalf("the request fits the window as sent (%d prompt tokens + max_tokens %d, window %d; %d as written), yet: %d %s",
			sent, maxTokens, sent+maxTokens+10, written, r.status, r.raw)
	}
	if b.primary.Calls() != 1 {
		t.Fatalf("the provider was called %d times, want once", b.primary.Calls())
	}
}
