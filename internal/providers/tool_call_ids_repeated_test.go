package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// answerCallIDs decodes a Response's tool calls into their ids and names.
func answerCallIDs(t *testing.T, r *Response) (ids, names []string) {
	t.Helper()
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(r.ToolCalls, &calls); err != nil {
		t.Fatalf("tool calls %s: %v", r.ToolCalls, err)
	}
	for _, c := range calls {
		ids, names = append(ids, c.ID), append(names, c.Function.Name+c.Function.Arguments)
	}
	return ids, names
}

// Some providers (DeepSeek, Zhipu's GLM, Kimi) reuse one id for parallel
// tool calls. Relayed as they came, the caller could not say which call a
// tool message answers, and chat.Normalize refused the assistant message
// when the caller sent it back: the conversation could not go on through
// the router. The first call keeps its id, a repeat gets one of the
// router's; streamed or not. Found by review.
func TestAnswerToolCallIDsUnique(t *testing.T) {
	const (
		paris = `{"index":0,"id":"call_0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}`
		rome  = `{"index":1,"id":"call_0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}`
	)
	for _, streamed := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if streamed {
				startStream(w)
				sse(w,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[`+paris+`]},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[`+rome+`]},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
					"[DONE]")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`+paris+`,`+rome+`]},"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`)
		})
		a := newTestAdapter(t, srv.URL, nil)
		var r *Response
		var err error
		if streamed {
			r, err = a.CompleteStream(context.Background(), testRequest(), nil)
		} else {
			r, err = a.Complete(context.Background(), testRequest())
		}
		if err != nil {
			t.Fatalf("streamed=%v: %v", streamed, err)
		}
		ids, names := answerCallIDs(t, r)
		if len(ids) != 2 || ids[0] != "call_0" || ids[1] == ids[0] || !strings.HasPrefix(ids[1], "call_") ||
			names[0] != `weather{"city":"Paris"}` || names[1] != `weather{"city":"Rome"}` {
			t.Errorf("streamed=%v: answer's tool calls %s: want the first's id kept, the second's its own, both calls kept", streamed, r.ToolCalls)
		}
	}
}

// An Anthropic-compatible endpoint (DeepSeek's, Kimi's, GLM's) may repeat a
// tool_use id as their OpenAI-compatible ones do: the answer's ids are made
// unique there too, streamed or not.
func TestAnthropicAnswerToolCallIDsUnique(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if !stream {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[`+
					`{"type":"tool_use","id":"toolu_0","name":"weather","input":{"city":"Paris"}},`+
					`{"type":"tool_use","id":"toolu_0","name":"weather","input":{"city":"Rome"}}],`+
					`"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
				`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_0","name":"weather","input":{}}}`,
				`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}`,
				`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
				`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_0","name":"weather","input":{}}}`,
				`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Rome\"}"}}`,
				`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":1}`,
				`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
				`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
			} {
				fmt.Fprint(w, ev+"\n\n")
			}
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		r, err := p.Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		ids, names := answerCallIDs(t, r)
		if len(ids) != 2 || ids[0] != "toolu_0" || ids[1] == ids[0] || ids[1] == "" ||
			names[0] != `weather{"city":"Paris"}` || names[1] != `weather{"city":"Rome"}` {
			t.Errorf("stream=%v: answer's tool calls %s: want the first's id kept, the second's its own, both calls kept", stream, r.ToolCalls)
		}
	}
}

// More calls than the scan without a map handles (16) are made unique too.
func TestUniqueToolCallIDsMany(t *testing.T) {
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("call_%d", i%3)
	}
	ids[5] = ""
	uniqueToolCallIDs(len(ids), func(i int) *string { return &ids[i] })
	seen := map[string]bool{}
	for i, id := range ids {
		if i == 5 {
			if id != "" {
				t.Fatalf("an empty id was given one: %q (left for incompleteToolCall)", id)
			}
			continue
		}
		if seen[id] {
			t.Fatalf("id %q repeated: %v", id, ids)
		}
		seen[id] = true
	}
	if ids[0] != "call_0" || ids[1] != "call_1" || ids[2] != "call_2" {
		t.Fatalf("first of each id not kept: %v", ids[:3])
	}
}
