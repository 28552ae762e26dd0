package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A stream is whole at message_stop, and was read on to the end of its body
// with the attempt's deadlines still running: a gateway that keeps the
// connection open after it, silent (the attempt's timeout passing before the
// idle deadline) or sending keep-alives (which hold the idle deadline off),
// made the whole, billed answer fail as stream_timeout, failed over and paid
// for twice. The answer is returned while the server still holds the body
// open. Found by review.
func TestAnthropicAnswerWholeAtMessageStop(t *testing.T) {
	for name, keepAlive := range map[string]string{"silent": "", "keep-alives": "event: ping\ndata: {\"type\": \"ping\"}\n\n"} {
		t.Run(name, func(t *testing.T) {
			url, handlerDone := holdAfter(t, func(w http.ResponseWriter) { anthSSE(w, anthWhole...) }, keepAlive)
			p := newAnthropicAdapter(t, url, func(c *AnthropicConfig) {
				c.Stream = true
				// The attempt's timeout passes long before the idle
				// deadline: it was what ended the wait for the body's end.
				c.StreamIdleTimeout = time.Hour
				c.Timeout = 5 * time.Second
			})
			resp, err := p.Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("a message whole at message_stop failed: %v", err)
			}
			select {
			case <-handlerDone:
				t.Fatal("the server ended the body: the test proves nothing")
			default:
			}
			if resp.Content != "Hello world" || resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 7 {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}

// Events after message_stop were still taken into the answer: a later text
// delta appended, a message_delta replacing the stop reason and usage, a
// second message_start the id and usage; an error event or an undecodable
// event turned the whole answer into a failure. The message is the one
// message_stop ended. Found by review.
func TestAnthropicEventsAfterMessageStopIgnored(t *testing.T) {
	cases := map[string][]string{
		"text delta and message_delta": {
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" INJECTED"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":999}}`,
		},
		"second message": {
			`{"type":"message_start","message":{"id":"msg_other","type":"message","role":"assistant","model":"claude-other","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"message_stop"}`,
		},
		"error event":                 {`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		"undecodable event":           {`{"type":"content_block_delta","index":0,"delta":{"type":"text_del`},
		"stop reason of another type": {`{"type":"message_delta","delta":{"stop_reason":7},"usage":{"output_tokens":"many"}}`},
		"bad block after it":          {`{"type":"content_block_start","index":-1,"content_block":{"type":"text","text":""}}`},
	}
	for name, after := range cases {
		t.Run(name, func(t *testing.T) {
			evs := append(append([]string(nil), anthWhole...), after...)
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
			var deltas string
			resp, err := p.CompleteStream(context.Background(), testRequest(), func(s string) { deltas += s })
			if err != nil {
				t.Fatalf("a message whole at message_stop failed: %v", err)
			}
			if resp.Content != "Hello world" || deltas != "Hello world" || resp.FinishReason != "stop" || resp.ResponseID != "msg_whole" ||
				resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 7 {
				t.Fatalf("response %+v, deltas %q: events after message_stop changed the answer", resp, deltas)
			}
		})
	}
}
