package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// elems is a JSON array's members: n copies of elem.
func elems(elem string, n int) string {
	return strings.Repeat(elem+",", n-1) + elem
}

// anthropicSSE writes an Anthropic stream whose message_start holds content
// and whose one tool_use block starts with input, then ends it.
func anthropicSSE(w http.ResponseWriter, content, input string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[%s],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\r\n\r\n", content)
	fmt.Fprintf(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":%s}}\n\n", input)
	fmt.Fprint(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n")
	fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}

// assertArrayBound checks err is the refusal of an answer holding an array
// past maxAnswerArrayElems: response_too_large, received, failed over, and
// saying so.
func assertArrayBound(t *testing.T, what string, err error) {
	t.Helper()
	e := mustError(t, err)
	want := fmt.Sprintf("JSON array of more than %d elements", maxAnswerArrayElems)
	if e.Kind != KindResponseTooLarge || e.Action != ActionFailover || !e.Received || !strings.Contains(e.Message, want) {
		t.Fatalf("%s: got %s/%s received=%v %q, want response_too_large, failover, received, saying %q",
			what, e.Kind, e.Action, e.Received, e.Message, want)
	}
}

// SPEC §17: a provider cannot crash the process. max_response_bytes bounds
// the bytes of an answer, not what they decode into: "choices":[{},{},…]
// (three bytes an element) decodes into structs of hundreds of bytes each,
// and one 8 MiB answer took gigabytes. An array of more than
// maxAnswerArrayElems elements anywhere in a 2xx answer (a body, a stream's
// event) refuses the answer, as one past max_response_bytes is; one at the
// bound, and string contents however many commas they hold, are read.
func TestAnswerArrayBound(t *testing.T) {
	over, at := maxAnswerArrayElems+1, maxAnswerArrayElems
	t.Run("openai", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if stream {
					startStream(w)
					fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[%s]}\n\n", elems("{}", over))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[%s]}`, elems("{}", over))
			})
			p := newTestAdapter(t, srv.URL, nil)
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), testRequest(), nil)
			} else {
				_, err = p.Complete(context.Background(), testRequest())
			}
			assertArrayBound(t, fmt.Sprintf("stream %v: %d choices", stream, over), err)
		}
	})
	t.Run("openai tool calls", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w)
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[%s]}}]}\n\n", elems("{}", over))
		})
		_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), toolRequest(), nil)
		assertArrayBound(t, fmt.Sprintf("%d tool-call deltas", over), err)
	})
	t.Run("openai at the bound", func(t *testing.T) {
		// An array of exactly the bound, and a content holding many
		// more commas and brackets than that.
		text := strings.Repeat(`[\"a\",`, 2*over)
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if stream {
					startStream(w)
					// Two events of the bound each: events are
					// decoded, and bounded, one by one.
					for range 2 {
						fmt.Fprintf(w, "data: {\"id\":\"c\",\"x\":[%s],\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\r\n\r\n", elems("1", at), text)
					}
					sse(w, chunk("", "stop"), "[DONE]")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"c","object":"chat.completion","x":[%s],"choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}]}`,
					elems("1", at), text)
			})
			p := newTestAdapter(t, srv.URL, nil)
			var (
				resp *Response
				err  error
			)
			if stream {
				resp, err = p.CompleteStream(context.Background(), testRequest(), nil)
			} else {
				resp, err = p.Complete(context.Background(), testRequest())
			}
			if err != nil {
				t.Fatalf("stream %v: an answer with an array of %d elements was refused: %v", stream, at, err)
			}
			if want := strings.Repeat(`["a",`, 2*over); resp.Content != want && resp.Content != want+want {
				t.Fatalf("stream %v: content of %d bytes, want %d", stream, len(resp.Content), len(want))
			}
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if stream {
					anthropicSSE(w, elems("{}", over), "{}")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[%s],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`,
					elems("{}", over))
			})
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			assertArrayBound(t, fmt.Sprintf("stream %v: %d content blocks", stream, over), err)
		}
	})
	t.Run("anthropic stream tool input", func(t *testing.T) {
		// Decoded (into maps and slices) by the SDK: bounded.
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			anthropicSSE(w, "", fmt.Sprintf(`{"a":[%s]}`, elems("{}", over)))
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
		_, err := p.Complete(context.Background(), toolRequest())
		assertArrayBound(t, "a streamed tool input's array", err)
	})
	t.Run("anthropic tool input kept raw", func(t *testing.T) {
		// A non-streamed tool_use block's input is the model's own
		// JSON, kept raw by the SDK: its arrays are not bounded, and
		// the block's members after it still are.
		input := fmt.Sprintf(`{"points":[%s],"nested":{"input":[[%s]]}}`, elems("0", 3*over), elems("1", over))
		for _, tail := range []string{"", fmt.Sprintf(`,"x":[%s]`, elems("1", over))} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input": %s %s}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":1}}`,
					input, tail)
			})
			p := newAnthropicAdapter(t, srv.URL, nil)
			resp, err := p.Complete(context.Background(), toolRequest())
			if tail != "" {
				assertArrayBound(t, "an array after a tool input", err)
				continue
			}
			if err != nil {
				t.Fatalf("a tool input with an array of %d elements was refused: %v", 3*over, err)
			}
			var calls []struct {
				Function struct{ Arguments string }
			}
			if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 || calls[0].Function.Arguments != input {
				t.Fatalf("tool calls %.200s (%v)", resp.ToolCalls, err)
			}
		}
	})
}

// The harm the bound prevents, measured: a 1 MiB answer of empty choices
// (or Anthropic content blocks) allocated 300 to 530 MiB before it (300 to
// 530 times max_response_bytes), a few MiB since. The threshold, 64 times,
// is far from both.
func TestAnswerArraysDoNotAmplifyMemory(t *testing.T) {
	const limit = 1 << 20
	many := strings.Repeat("{},", (limit-200)/3-1) + "{}"
	measure := func(call func() error) (uint64, error) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := call()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			if stream {
				startStream(w)
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[%s]}\n\n", many)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[%s]}`, many)
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = limit })
		allocated, err := measure(func() error {
			if stream {
				_, err := p.CompleteStream(context.Background(), testRequest(), nil)
				return err
			}
			_, err := p.Complete(context.Background(), testRequest())
			return err
		})
		if allocated > 64*limit {
			t.Errorf("stream %v: a %d-byte answer of empty choices allocated %d MiB (%dx max_response_bytes); err %v",
				stream, limit, allocated>>20, allocated/limit, err)
		}
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[%s],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`,
			strings.Repeat("{},", (limit-400)/3-1)+"{}")
	})
	pa := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.MaxResponseBytes = limit })
	allocated, err := measure(func() error {
		_, err := pa.Complete(context.Background(), testRequest())
		return err
	})
	if allocated > 64*limit {
		t.Errorf("anthropic: a %d-byte message of empty content blocks allocated %d MiB (%dx max_response_bytes); err %v",
			limit, allocated>>20, allocated/limit, err)
	}
}
