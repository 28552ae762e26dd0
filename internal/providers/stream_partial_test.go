package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A streamed call that failed, or was cancelled, after part of its answer
// had come returned an error without that part: the race then recorded only
// the prompt's tokens for it, though the provider billed the output it had
// generated (a hedge loser cancelled mid-stream was costed at a fraction of
// its price). The error carries the part that came (Error.Partial): content,
// refusal, and the tool calls' names and arguments. Found by review.
func TestOpenAIStreamErrorCarriesThePartialAnswer(t *testing.T) {
	answer := []string{
		// A tool call, then a refusal, then content: the content delta is
		// last, so onDelta seeing it says every chunk was taken.
		`{"id":"chatcmpl-p","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-p","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-p","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test","choices":[{"index":0,"delta":{"refusal":"I won't"},"finish_reason":null}]}`,
		chunk("Hel", ""),
		chunk("lo", ""),
	}
	const want = `HelloI won'tget_weather{"city":"Paris"}`
	cases := []struct {
		name  string
		kind  Kind
		after func(w http.ResponseWriter, r *http.Request)
		idle  time.Duration
	}{
		{name: "cancelled", kind: KindCancelled, after: holdOpen},
		{name: "cut", kind: KindStreamCut, after: func(http.ResponseWriter, *http.Request) {}},
		{name: "malformed", kind: KindStreamMalformed, after: func(w http.ResponseWriter, _ *http.Request) {
			sse(w, `{"id":`)
		}},
		// The idle deadline passes while the server holds the stream open:
		// what is checked is the error's content, not when it came.
		{name: "stalled", kind: KindStreamStalled, idle: 50 * time.Millisecond, after: holdOpen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				// The headers go with the chunks, in one write: the idle
				// deadline cannot pass between them.
				w.Header().Set("Content-Type", "text/event-stream")
				sse(w, answer...)
				c.after(w, r)
			})
			p := newTestAdapter(t, srv.URL+"/v1", func(cfg *OpenAIConfig) {
				cfg.Stream = true
				cfg.StreamIdleTimeout = c.idle
			})
			e := mustError(t, streamUntil(t, c.kind == KindCancelled, "lo", func(ctx context.Context, onDelta func(string)) error {
				_, err := p.CompleteStream(ctx, testRequest(), onDelta)
				return err
			}))
			if e.Kind != c.kind || e.Usage != nil || e.AnsweredWithError {
				t.Fatalf("error %s (%v), usage %v, answered with error %v; want %s without usage", e.Kind, e, e.Usage, e.AnsweredWithError, c.kind)
			}
			if e.Partial != want {
				t.Fatalf("partial %q, want %q", e.Partial, want)
			}
		})
	}
}

// The same for an Anthropic stream whose message_start reported no usage (a
// gateway's): the part of the message that came goes with the error. One
// whose message_start reported usage keeps that usage, the provider's own
// figure, and carries no partial answer to estimate over it.
func TestAnthropicStreamErrorCarriesThePartialAnswer(t *testing.T) {
	start := func(in, out int) string {
		return fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_p","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}}`, in, out)
	}
	// A tool_use block, then a text block: the text delta is last, so
	// onDelta seeing it says every event was taken.
	body := []string{
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}`,
	}
	const want = `Helloget_weather{"city":"Paris"}`
	cases := []struct {
		name    string
		kind    Kind
		start   string
		hold    bool
		usage   bool // message_start (and a message_delta) reported usage
		more    []string
		partial string
	}{
		{name: "cancelled", kind: KindCancelled, start: start(0, 0), hold: true, partial: want},
		{name: "cut", kind: KindStreamCut, start: start(0, 0), partial: want},
		// message_start's usage is kept, and its output count of 1 is
		// provisional: the partial answer comes with it for the race to
		// count (found by review: a real Anthropic loser was costed at one
		// output token however much it had streamed).
		{name: "usage reported", kind: KindStreamCut, start: start(5, 1), usage: true, partial: want},
		// A message_delta's count is final: nothing to estimate over it.
		{name: "output counted", kind: KindStreamCut, start: start(5, 1), usage: true,
			more: []string{`{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":9}}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				anthSSE(w, append(append([]string{c.start}, body...), c.more...)...)
				w.(http.Flusher).Flush()
				if c.hold {
					holdOpen(w, r)
				}
			})
			p := newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = true })
			e := mustError(t, streamUntil(t, c.hold, "lo", func(ctx context.Context, onDelta func(string)) error {
				_, err := p.CompleteStream(ctx, testRequest(), onDelta)
				return err
			}))
			if e.Kind != c.kind {
				t.Fatalf("error %s (%v), want %s", e.Kind, e, c.kind)
			}
			if c.usage && (e.Usage == nil || e.Usage.PromptTokens != 5) {
				t.Fatalf("usage %v, want the usage reported", e.Usage)
			}
			if !c.usage && e.Usage != nil {
				t.Fatalf("usage %+v, want none (message_start reported none)", *e.Usage)
			}
			if e.Partial != c.partial {
				t.Fatalf("partial %q, want %q", e.Partial, c.partial)
			}
		})
	}
}

// holdOpen keeps a stream open until the client goes away.
func holdOpen(_ http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

// streamUntil runs call; when cancel is set, it cancels the call's context
// once onDelta has seen last — every part of the answer taken — and the
// server holds the stream open.
func streamUntil(t *testing.T, cancel bool, last string, call func(ctx context.Context, onDelta func(string)) error) error {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var once sync.Once
	onDelta := func(d string) {
		if cancel && strings.HasSuffix(d, last) {
			once.Do(stop)
		}
	}
	return call(ctx, onDelta)
}
