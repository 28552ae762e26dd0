package providers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// OpenAI lets a function tool leave parameters out, and {"type":"object"}
// alone is common; the adapter dropped "type" and sent such a tool without
// input_schema (the SDK omits a zero schema), which the Messages API refuses
// with a 400 invalid_request_error: the job stopped with no failover. Found
// by review.
func TestAnthropicToolWithoutParametersHasInputSchema(t *testing.T) {
	for name, tools := range map[string]string{
		"no parameters":      `[{"type":"function","function":{"name":"get_time"}}]`,
		"null parameters":    `[{"type":"function","function":{"name":"get_time","parameters":null}}]`,
		"bare object schema": `[{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
			p := newAnthropicAdapter(t, srv.URL, nil)
			req := &Request{Messages: []Message{{Role: "user", Content: "what time is it"}}, Tools: json.RawMessage(tools)}
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			tool := srv.Requests()[0].Body["tools"].([]any)[0].(map[string]any)
			schema, ok := tool["input_schema"].(map[string]any)
			if !ok || schema["type"] != "object" {
				t.Fatalf("tool sent as %v: the Messages API refuses a custom tool without input_schema", tool)
			}
			if props, ok := schema["properties"].(map[string]any); !ok || len(props) != 0 {
				t.Fatalf("input_schema %v, want empty properties", schema)
			}
		})
	}
}

// A schema with properties is carried over as it was.
func TestAnthropicToolSchemaKeepsProperties(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := &Request{Messages: []Message{{Role: "user", Content: "weather?"}},
		Tools: json.RawMessage(`[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}]`)}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	schema := srv.Requests()[0].Body["tools"].([]any)[0].(map[string]any)["input_schema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if schema["type"] != "object" || props["city"] == nil || schema["additionalProperties"] != false {
		t.Fatalf("input_schema %v", schema)
	}
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "city" {
		t.Fatalf("input_schema %v", schema)
	}
}
