package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// anthToolStart is the content_block_start of a tool_use block at index.
func anthToolStart(index, id string) string {
	return `{"type":"content_block_start","index":` + index + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"get_weather","input":{}}}`
}

// anthToolArgs is an input_json_delta for the block at index.
func anthToolArgs(index, partial string) string {
	return `{"type":"content_block_delta","index":` + index + `,"delta":{"type":"input_json_delta","partial_json":` + fmt.Sprintf("%q", partial) + `}}`
}

// A content_block_start whose index was already started overwrote the tool
// call there and listed its index again: a stream that started index 0 twice
// reported the second call twice and dropped the first, so a caller's tool
// with side effects ran twice. A negative index was taken, and nothing
// bounded how many tool calls a stream could make. Each is a malformed
// stream (as an OpenAI-compatible stream's bad tool-call index is): the
// attempt fails over, billed with the usage message_start reported. Found by
// review.
func TestAnthropicStreamBadBlockIndex(t *testing.T) {
	const start = `{"type":"message_start","message":{"id":"msg_idx","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`
	end := []string{
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`,
		`{"type":"message_stop"}`,
	}
	many := []string{}
	for i := range maxStreamToolCalls + 1 {
		many = append(many, anthToolStart(fmt.Sprint(i), fmt.Sprintf("toolu_%d", i)), anthToolArgs(fmt.Sprint(i), `{"city":"Oslo"}`),
			fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	cases := map[string]struct {
		blocks []string
		want   string
	}{
		"index started twice": {[]string{
			anthToolStart("0", "toolu_1"), anthToolArgs("0", `{"city":"Oslo"}`), `{"type":"content_block_stop","index":0}`,
			anthToolStart("0", "toolu_2"), anthToolArgs("0", `{"city":"Rome"}`), `{"type":"content_block_stop","index":0}`,
		}, "content block 0 was started twice"},
		"text then tool at one index": {[]string{
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check."}}`,
			`{"type":"content_block_stop","index":0}`,
			anthToolStart("0", "toolu_1"), anthToolArgs("0", `{"city":"Oslo"}`), `{"type":"content_block_stop","index":0}`,
		}, "content block 0 was started twice"},
		"negative index": {[]string{
			anthToolStart("-1", "toolu_1"), anthToolArgs("-1", `{"city":"Oslo"}`), `{"type":"content_block_stop","index":-1}`,
		}, "content block index -1 is negative"},
		"too many tool calls": {many, fmt.Sprintf("more than %d tool calls", maxStreamToolCalls)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			evs := append(append([]string{start}, c.blocks...), end...)
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
			resp, err := p.CompleteStream(context.Background(), toolRequest(), nil)
			if resp != nil {
				calls := string(resp.ToolCalls)
				t.Fatalf("a response from a malformed stream: %d tool calls (%s)", strings.Count(calls, `"id":"toolu_`), calls[:min(len(calls), 300)])
			}
			e := assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
			if !e.Received || !strings.Contains(e.Message, c.want) {
				t.Fatalf("error %v (received %v), want a message that says %q", e, e.Received, c.want)
			}
			if e.Usage == nil || e.Usage.PromptTokens != 12 || e.ResponseID != "msg_idx" {
				t.Fatalf("usage %+v, response id %q: want the 12 input tokens message_start reported, billed", e.Usage, e.ResponseID)
			}
		})
	}
}

// The bound is on tool calls, not on blocks: a message of many text blocks
// and as many tool calls as the bound allows, each at its own index, is whole.
func TestAnthropicStreamToolCallsUpToTheBound(t *testing.T) {
	evs := []string{`{"type":"message_start","message":{"id":"msg_ok","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`}
	idx := 0
	for i := range maxStreamToolCalls {
		evs = append(evs,
			fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, idx),
			fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"."}}`, idx),
			fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx),
			anthToolStart(fmt.Sprint(idx+1), fmt.Sprintf("toolu_%d", i)), anthToolArgs(fmt.Sprint(idx+1), `{"city":"Oslo"}`),
			fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx+1))
		idx += 2
	}
	evs = append(evs, `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`, `{"type":"message_stop"}`)
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
	resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).CompleteStream(context.Background(), toolRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(resp.ToolCalls), `"id":"toolu_`); n != maxStreamToolCalls || resp.Content != strings.Repeat(".", maxStreamToolCalls) {
		t.Fatalf("%d tool calls and content %q, want %d of each", n, resp.Content, maxStreamToolCalls)
	}
}
