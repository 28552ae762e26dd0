package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var anthropicToolIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Tool call ids from other providers (Kimi's "functions.get_weather:0", MCP
// and proxy ids with ".", ":", "|", "/") were sent to Anthropic unchanged as
// tool_use.id and tool_result.tool_use_id; Anthropic refuses ids outside
// ^[a-zA-Z0-9_-]+$ with a 400, classified bad_request/stop: the job ended,
// the caller blamed for ids the router had returned. They are mapped onto the
// pattern now, on both sides alike, so the pair still matches. Found by
// review.
func TestAnthropicForeignToolIDsAreMapped(t *testing.T) {
	var mu sync.Mutex
	var useIDs, resultIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content []struct {
					Type      string `json:"type"`
					ID        string `json:"id"`
					ToolUseID string `json:"tool_use_id"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			anthReal400(w, "body: "+err.Error())
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i, m := range body.Messages {
			for j, b := range m.Content {
				switch b.Type {
				case "tool_use":
					useIDs = append(useIDs, b.ID)
					if !anthropicToolIDPattern.MatchString(b.ID) {
						anthReal400(w, "messages."+strconv.Itoa(i)+".content."+strconv.Itoa(j)+".tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
						return
					}
				case "tool_result":
					resultIDs = append(resultIDs, b.ToolUseID)
					if !anthropicToolIDPattern.MatchString(b.ToolUseID) {
						anthReal400(w, "messages."+strconv.Itoa(i)+".content."+strconv.Itoa(j)+".tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'")
						return
					}
				}
			}
		}
		anthOK(w)
	}))
	defer srv.Close()
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := &Request{
		Messages: []Message{
			{Role: "user", Content: "weather in Paris?"},
			{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`)},
			{Role: "tool", ToolCallID: "functions.get_weather:0", Content: "sunny"},
		},
		Tools: json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`),
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("a conversation with another provider's tool call id: %v", err)
	}
	if resp.Content != "done" {
		t.Errorf("content %q", resp.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(useIDs) != 1 || len(resultIDs) != 1 || useIDs[0] != resultIDs[0] {
		t.Errorf("tool_use ids %q, tool_result ids %q: want one each, equal", useIDs, resultIDs)
	}
}

// The mapping keeps valid ids, is deterministic, keeps ids that differ only
// in invalid characters apart, and stays short.
func TestAnthropicToolIDMapping(t *testing.T) {
	for _, id := range []string{"toolu_01A09q90qw90lq917835lq9", "call_abc-123", strings.Repeat("a", 200)} {
		if got := anthropicToolID(id); got != id {
			t.Errorf("valid id %q mapped to %q, want it kept", id, got)
		}
	}
	seen := map[string]string{}
	for _, id := range []string{
		"functions.get_weather:0", "functions:get_weather.0", "functions_get_weather_0x",
		"mcp|server/tool#1", "mcp/server|tool#1", "é", "ü", "call 1", strings.Repeat("x.", 200),
	} {
		got := anthropicToolID(id)
		if !anthropicToolIDPattern.MatchString(got) || len(got) > 64 {
			t.Errorf("%q mapped to %q: want ^[a-zA-Z0-9_-]+$, at most 64 characters", id, got)
		}
		if again := anthropicToolID(id); again != got {
			t.Errorf("%q mapped to %q, then %q", id, got, again)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%q and %q both map to %q", other, id, got)
		}
		seen[got] = id
	}
	if got := anthropicToolID("functions.get_weather:0"); !strings.HasPrefix(got, "functions_get_weather_0_") {
		t.Errorf("mapped id %q: want the readable id kept as its prefix", got)
	}
}
