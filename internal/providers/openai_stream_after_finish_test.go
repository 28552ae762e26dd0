package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// toolCallChunk is a whole tool call in one chunk, without a finish_reason.
const toolCallChunk = `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`

// An answer whose finish_reason came on an empty delta is whole there: the
// body ending, a reset or silence before its usage chunk returns it. So does
// an error or undecodable chunk in that place, as it does after the usage
// chunk (TestOpenAIChunksAfterUsageChunkIgnored): the read after the
// finish_reason is best effort, and failing the whole, billed answer would
// have the job fail over and pay twice.
func TestStreamErrorAfterFinishBeforeUsageIgnored(t *testing.T) {
	errLine := `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`
	for name, after := range map[string]string{
		"error chunk":       errLine,
		"undecodable chunk": `{"id":"chatcmpl-s","choices":[{"index":0,`,
	} {
		for _, finish := range []string{"stop", "end_turn", "tool_calls"} {
			t.Run(name+"/"+finish, func(t *testing.T) {
				answer := chunk(`{"a":1}`, "")
				if finish == "tool_calls" {
					answer = toolCallChunk
				}
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					startStream(w)
					sse(w, answer, chunk("", finish), after, usageChunk)
					fmt.Fprint(w, "data: [DONE]\n\n")
				})
				p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) {
					cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Hour, time.Hour
				})
				resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
				if err != nil {
					t.Fatalf("finish_reason %q on an empty delta, then an %s: the whole answer failed: %v", finish, name, err)
				}
				if resp.FinishReason != wholeFinishReason(finish) || finish != "tool_calls" && resp.Content != `{"a":1}` || finish == "tool_calls" && !strings.Contains(string(resp.ToolCalls), `"call_1"`) {
					t.Fatalf("response %+v", resp)
				}
			})
		}
	}
}

// Where the finish_reason does not yet say the answer is whole, an error or
// undecodable chunk after it still fails the answer: a gateway that puts
// "stop" on every chunk of the answer (its last chunk read carried content),
// a one-chunk answer awaiting its usage chunk or [DONE], "stop" on the
// reasoning before the answer began, and a finish_reason that is no whole
// ending ("error").
func TestStreamErrorAfterUnsettledFinishFails(t *testing.T) {
	errLine := `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`
	reasoning := `{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":"stop"}]}`
	for name, events := range map[string][]string{
		"stop on every chunk":   {chunk("Step 1:", "stop"), chunk(" Step 2:", "stop")},
		"one-chunk answer":      {chunk("the whole answer", "stop")},
		"stop on the reasoning": {reasoning},
		"error ending":          {chunk("Step 1:", ""), chunk("", "error")},
	} {
		for after, bad := range map[string]string{"error chunk": errLine, "undecodable chunk": `{"id":"chatcmpl-s","choices":[{"index":0,`} {
			t.Run(name+"/"+after, func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					startStream(w)
					sse(w, append(events, bad, usageChunk)...)
					fmt.Fprint(w, "data: [DONE]\n\n")
				})
				p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) {
					cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Hour, time.Hour
				})
				resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
				if err == nil {
					t.Fatalf("an answer not yet whole, broken by an %s, was returned as whole: %+v", after, resp)
				}
			})
		}
	}
}
