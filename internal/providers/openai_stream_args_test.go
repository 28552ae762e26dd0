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

// A tool call's arguments were assembled with += on a string, one copy of
// everything so far per delta: 20,000 deltas of 150 bytes allocated 28.8 GB
// and took 17 s of CPU, and a 200 KB call in 8-byte deltas 2.5 GB. What a
// stream allocates must grow with its size, not with its square: twice the
// deltas, at most about twice the allocation (the += assembly took four
// times as much). Found by review.
func TestOpenAIStreamToolCallArgumentsLinear(t *testing.T) {
	const deltas = 10000
	half, halfLen := toolCallStreamAlloc(t, deltas)
	full, fullLen := toolCallStreamAlloc(t, 2*deltas)
	t.Logf("%d deltas (%d bytes of stream): %d bytes allocated; %d deltas (%d bytes): %d bytes (%.2f times as much)",
		deltas, halfLen, half, 2*deltas, fullLen, full, float64(full)/float64(half))
	// Per chunk, decoding and go-openai's line handling cost the same
	// whatever came before (under the race detector, which disables
	// sync.Pool's reuse at random, several times more than without it):
	// doubling the stream doubles that. The quadratic assembly quadrupled.
	if full > 3*half {
		t.Fatalf("a stream of %d tool-call deltas allocated %d bytes, %.1f times what %d deltas did (%d bytes): allocation grows faster than the stream",
			2*deltas, full, float64(full)/float64(half), deltas, half)
	}
	// And in absolute terms: a small multiple of what the provider sent
	// (about 10 times without the race detector, 100 with it; the +=
	// assembly of 20,000 deltas took 4,700 times).
	if bound := uint64(500 * fullLen); full > bound {
		t.Fatalf("a stream of %d bytes allocated %d bytes, more than %d (500 times the stream)", fullLen, full, bound)
	}
}

// toolCallStreamAlloc is what CompleteStream allocates reading a stream
// whose one tool call's arguments come in deltas pieces of 150 bytes, and
// the stream's size. It checks the arguments come back whole.
func toolCallStreamAlloc(t *testing.T, deltas int) (allocated uint64, streamLen int) {
	t.Helper()
	part := strings.Repeat("a", 150)
	var b strings.Builder
	ev := func(s string) { fmt.Fprintf(&b, "data: %s\n\n", s) }
	ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\""}}]}}]}`)
	for range deltas {
		ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + part + `"}}]}}]}`)
	}
	ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}}]}`)
	ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
	ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":20000,"total_tokens":20030}}`)
	ev(`[DONE]`)
	stream := b.String() // built before the measurement: the server only writes it

	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		_, _ = w.Write([]byte(stream))
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = 64 << 20 })

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := p.CompleteStream(context.Background(), toolRequest(), nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	var calls []struct {
		Function struct {
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 {
		t.Fatalf("tool calls do not decode to one call (%v)", err)
	}
	if args, want := calls[0].Function.Arguments, `{"city":"`+strings.Repeat(part, deltas)+`"}`; args != want {
		t.Fatalf("arguments of %d bytes, want the %d bytes sent", len(args), len(want))
	}
	return after.TotalAlloc - before.TotalAlloc, len(stream)
}
