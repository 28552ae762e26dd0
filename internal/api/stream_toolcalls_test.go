package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/routerhq/router/internal/providers"
)

// twoCalls is an answer that calls two tools at once (parallel tool calls).
const twoCalls = `[{"id":"call_paris","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
	`{"id":"call_rome","type":"function","function":{"name":"get_time","arguments":"{\"city\":\"Rome\"}"}}]`

// streamedToolDeltas is the tool_calls member of each event of an SSE body
// that has one, in order (comment lines and [DONE] skipped).
func streamedToolDeltas(t *testing.T, body string) [][]map[string]any {
	t.Helper()
	var out [][]map[string]any
	for line := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []map[string]any `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if len(ch.Choices) == 1 && len(ch.Choices[0].Delta.ToolCalls) > 0 {
			out = append(out, ch.Choices[0].Delta.ToolCalls)
		}
	}
	return out
}

// withoutComments is an SSE body without its keep-alive comment lines (and
// the blank line after each), which a stream may or may not carry depending
// on how long its job took.
func withoutComments(body string) string {
	var b strings.Builder
	for event := range strings.SplitSeq(body, "\n\n") {
		if event == "" || strings.HasPrefix(event, ":") {
			continue
		}
		b.WriteString(event)
		b.WriteString("\n\n")
	}
	return b.String()
}

// docs/chat.md promises tool calls "streamed as one delta per call", as
// OpenAI starts each call in a chunk of its own. The router sent every call
// in one delta, and openai-go's ChatCompletionAccumulator, which looks only
// at a delta's first call, reported the first of two calls as finished and
// never the second. Each call now goes in its own chunk with its index, in
// the answer's order, and a streamed replay sends the same bytes. Found by
// review.
func TestReviewStreamTwoToolCallsOpenAIGo(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{ToolCalls: twoCalls}
	}})
	p := sdkParams("weather in Paris and time in Rome?")
	p.Tools = []oai.ChatCompletionToolUnionParam{
		oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}}),
		oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time", Parameters: shared.FunctionParameters{"type": "object"}}),
	}
	c := b.sdk(acmeKey)
	stream := c.Chat.Completions.NewStreaming(context.Background(), p, option.WithHeader("Idempotency-Key", "two-calls-1"))
	defer stream.Close()
	var acc oai.ChatCompletionAccumulator
	var finished []oai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(finished) != 2 ||
		finished[0].ID != "call_paris" || finished[0].Name != "get_weather" || finished[0].Arguments != `{"city":"Paris"}` || finished[0].Index != 0 ||
		finished[1].ID != "call_rome" || finished[1].Name != "get_time" || finished[1].Arguments != `{"city":"Rome"}` || finished[1].Index != 1 {
		t.Fatalf("openai-go's accumulator finished %+v, want both calls in order", finished)
	}
	if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 2 || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("accumulated %+v", acc.Choices)
	}

	// On the wire: one call per chunk, each with its index, in order.
	body := `{"model":"default","stream":true,"messages":[{"role":"system","content":"You answer briefly."},{"role":"user","content":"weather in Paris and time in Rome?"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]}`
	first := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "two-calls-2")
	if first.status != http.StatusOK {
		t.Fatalf("status %d: %s", first.status, first.raw)
	}
	deltas := streamedToolDeltas(t, string(first.raw))
	if len(deltas) != 2 {
		t.Fatalf("%d events carry tool calls, want one per call (2):\n%s", len(deltas), first.raw)
	}
	for i, want := range []string{"call_paris", "call_rome"} {
		if len(deltas[i]) != 1 || deltas[i][0]["id"] != want || deltas[i][0]["index"] != float64(i) {
			t.Fatalf("event %d carries %v, want call %s alone with index %d", i, deltas[i], want, i)
		}
	}
	replay := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "two-calls-2")
	if replay.header.Get("Idempotent-Replayed") != "true" || withoutComments(string(replay.raw)) != withoutComments(string(first.raw)) {
		t.Fatalf("the streamed replay differs from the first stream:\n%s\n%s", first.raw, replay.raw)
	}
}
