package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A billed failure built from a complete answer carries the answer's text
// (Error.Answer: reasoning, content, refusal, tool calls' names and
// arguments), streamed or not and whatever usage came with it, so that the
// race counts the output the provider billed where the usage leaves a hole
// (docs/providers.md, Cost). Before, only a stream's error without usage
// carried any of it (Error.Partial).
func TestBilledFailureCarriesItsAnswer(t *testing.T) {
	const usage = `{"total_tokens":81}`
	rows := []struct {
		name, body string
		chunks     []string
		want       []string // each must be in Answer
	}{
		{"finish_reason error",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"thought it over","content":"the answer so far"},"finish_reason":"error"}],"usage":` + usage + `}`,
			[]string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"thought it over"},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"the answer so far"},"finish_reason":"error"}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + usage + `}`,
			},
			[]string{"thought it over", "the answer so far"}},
		{"refusal",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			[]string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			},
			[]string{"I can't help with that."}},
		{"tool call without id or name",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],"usage":` + usage + `}`,
			nil,
			[]string{`{"city":"Oslo"}`}},
		{"content filter",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"withheld text"},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}`,
			nil,
			[]string{"withheld text"}},
	}
	check := func(t *testing.T, err error, want []string) {
		t.Helper()
		e := mustError(t, err)
		if !e.Received {
			t.Fatalf("%v: want a billed failure (received)", e)
		}
		for _, w := range want {
			if !strings.Contains(e.Answer, w) {
				t.Errorf("%v: Answer %q lacks %q", e, e.Answer, w)
			}
		}
	}
	for _, r := range rows {
		t.Run(r.name+"/complete", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(r.body))
			})
			_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			check(t, err, r.want)
		})
		if r.chunks == nil {
			continue
		}
		t.Run(r.name+"/stream", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, append(r.chunks, "[DONE]")...)
			})
			_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			check(t, err, r.want)
		})
	}
	for _, stop := range []string{"refusal", "pause_turn", "no_such_reason"} {
		for _, stream := range []bool{false, true} {
			t.Run(map[bool]string{false: "anthropic " + stop + "/message", true: "anthropic " + stop + "/stream"}[stream], func(t *testing.T) {
				srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Thinking: "weighing it", Text: "the message text",
					StopReason: stop, InputTokens: 10, OutputTokens: 0}))
				p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				check(t, err, []string{"weighing it", "the message text"})
			})
		}
	}
}
