package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// repeatedCallRequest is a history in which every assistant turn calls
// weather with the same ids, as OpenAI allows (a tool message answers the
// assistant message right before it) and some agents do ("call_0" in each
// turn).
func repeatedCallRequest(turns int, ids ...string) *Request {
	var calls []string
	for _, id := range ids {
		calls = append(calls, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":"weather","arguments":"{}"}}`, id))
	}
	call := json.RawMessage("[" + strings.Join(calls, ",") + "]")
	req := &Request{MaxTokens: 50, Messages: []Message{{Role: "user", Content: "weather in Paris?"}}}
	for k := range turns {
		if k > 0 {
			req.Messages = append(req.Messages,
				Message{Role: "assistant", Content: "Sunny."},
				Message{Role: "user", Content: "and now?"})
		}
		req.Messages = append(req.Messages, Message{Role: "assistant", ToolCalls: call})
		for _, id := range ids {
			req.Messages = append(req.Messages, Message{Role: "tool", ToolCallID: id, Content: fmt.Sprintf("answer %d", k)})
		}
	}
	return req
}

// A tool call id repeated in a later assistant turn — valid in OpenAI's
// protocol, which pairs each tool message with the assistant message right
// before it — was sent to Anthropic as it was, and Anthropic refuses a
// request whose tool_use ids are not unique ("`tool_use` ids must be
// unique"): bad_request, the job stopped. A reused id is sent under a new,
// deterministic id, and the tool results of its turn name that id. Found by
// review (ranth3 #1).
func TestAnthropicToolIDRepeatedAcrossTurns(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			fake := &anthStrict{}
			srv := newFakeServer(t, fake.ServeHTTP)
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			call := func(req *Request) error {
				var err error
				if stream {
					_, err = p.CompleteStream(context.Background(), req, nil)
				} else {
					_, err = p.Complete(context.Background(), req)
				}
				return err
			}
			// The reviewer's history: call_0 in two turns.
			if err := call(repeatedCallRequest(2, "call_0")); err != nil {
				e, _ := AsError(err)
				t.Fatalf("kind %s action %s: %v", e.Kind, e.Action, err)
			}
			uses, results := fake.ids()
			if len(uses) != 2 || uses[0] != "call_0" || uses[1] == "call_0" || !slices.Equal(uses, results) {
				t.Fatalf("tool_use ids %q, tool_result ids %q: want call_0 kept, then a new id, each answered by its own turn", uses, results)
			}
			if !anthropicToolIDPattern.MatchString(uses[1]) || len(uses[1]) > 64 || !strings.HasPrefix(uses[1], "call_0_") {
				t.Errorf("renamed id %q: want call_0_ and a hash, within ^[a-zA-Z0-9_-]+$ and 64 characters", uses[1])
			}
			// Deterministic: the same history sends the same ids (a retry, a
			// failover to another Anthropic target).
			if err := call(repeatedCallRequest(2, "call_0")); err != nil {
				t.Fatal(err)
			}
			if again, _ := fake.ids(); !slices.Equal(again, uses) {
				t.Errorf("the same history sent tool_use ids %q, then %q", uses, again)
			}
		})
	}
}

// Parallel calls over several turns, a foreign id that is also mapped onto
// Anthropic's pattern, and a caller id that happens to be the new id of an
// earlier reused one: every tool_use id is unique, and every turn's tool
// results name its own calls.
func TestAnthropicToolIDRepeatedManyTurns(t *testing.T) {
	fake := &anthStrict{}
	srv := newFakeServer(t, fake.ServeHTTP)
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := repeatedCallRequest(3, "call_0", "functions.weather:1")
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("three turns of the same two ids: %v", err)
	}
	uses, results := fake.ids()
	if len(uses) != 6 || !slices.Equal(uses, results) {
		t.Fatalf("tool_use ids %q, tool_result ids %q: want six, each answered in its turn", uses, results)
	}
	if uses[0] != "call_0" || uses[1] != anthropicToolID("functions.weather:1") {
		t.Errorf("first turn sent %q: want the ids as a turn without reuse sends them", uses[:2])
	}
	// The caller's next turn uses, as its own id, the id the adapter gave
	// the second turn's call_0.
	taken := uses[2]
	req.Messages = append(req.Messages,
		Message{Role: "user", Content: "and tomorrow?"},
		Message{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"` + taken + `","type":"function","function":{"name":"weather","arguments":"{}"}}]`)},
		Message{Role: "tool", ToolCallID: taken, Content: "snow"})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("a caller id equal to an earlier new id: %v", err)
	}
	uses, results = fake.ids()
	if len(uses) != 7 || !slices.Equal(uses, results) || uses[6] == taken {
		t.Errorf("tool_use ids %q, tool_result ids %q: want the last call under a new id of its own", uses, results)
	}
}
