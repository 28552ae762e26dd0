package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// holdAfter answers with send, then keeps the connection open — silent, or
// writing keepAlive at each tick when it is not empty (a gateway's SSE
// comments or pings) — until the test ends. It ignores its client going
// away, so that the test can tell the answer came while the server still
// held the body open: done is closed only when the handler returns.
func holdAfter(t *testing.T, send func(http.ResponseWriter), keepAlive string) (url string, done <-chan struct{}) {
	t.Helper()
	release, finished := make(chan struct{}), make(chan struct{})
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(finished)
		send(w)
		w.(http.Flusher).Flush()
		if keepAlive == "" {
			<-release
			return
		}
		// The provider's pace, not a synchronisation.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				fmt.Fprint(w, keepAlive)
				w.(http.Flusher).Flush()
			case <-release:
				return
			}
		}
	})
	// Registered after the server: closed before it is, so that the handler
	// returns and srv.Close does not wait.
	t.Cleanup(func() { close(release) })
	return srv.URL, finished
}

// A stream is whole at its finish_reason, and was read on to [DONE] with the
// attempt's deadlines still running: a gateway that keeps the connection
// open after the usage chunk — silent, the attempt's timeout passing before
// the idle deadline, or sending keep-alives, which hold the idle deadline
// off — made the whole, billed answer fail as stream_timeout, failed over and
// paid for twice. The answer is returned, with its usage, while the server
// still holds the body open. Found by review.
func TestOpenAIAnswerWholeAfterUsageChunk(t *testing.T) {
	for name, keepAlive := range map[string]string{"silent": "", "keep-alives": ": keep-alive\n\n"} {
		t.Run(name, func(t *testing.T) {
			url, handlerDone := holdAfter(t, func(w http.ResponseWriter) {
				startStream(w)
				sse(w, chunk(`{"a":1}`, ""), chunk("", "stop"), usageChunk)
			}, keepAlive)
			p := newTestAdapter(t, url, func(c *OpenAIConfig) {
				// The attempt's timeout passes long before the idle
				// deadline: it was what ended the wait for [DONE].
				c.StreamIdleTimeout = time.Hour
				c.Timeout = time.Second
			})
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("an answer whole at its finish_reason failed: %v", err)
			}
			select {
			case <-handlerDone:
				t.Fatal("the server ended the body: the test proves nothing")
			default:
			}
			if resp.Content != `{"a":1}` || resp.FinishReason != "stop" || resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 5 {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}

// An error chunk or an undecodable one after the usage chunk
// (include_usage's last, after the finish_reason) turned the whole answer
// into a failure. Found by review.
func TestOpenAIChunksAfterUsageChunkIgnored(t *testing.T) {
	cases := map[string][]string{
		"error chunk":       {usageChunk, `{"id":"chatcmpl-s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"error"}],"error":{"code":502,"message":"Provider disconnected unexpectedly"}}`},
		"error line":        {usageChunk, `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`},
		"undecodable chunk": {usageChunk, `{"id":"chatcmpl-s","choices":[{"index":0,"delta":{"content":"x"`},
	}
	for name, after := range cases {
		t.Run(name, func(t *testing.T) {
			events := append([]string{chunk(`{"a":1}`, ""), chunk("", "stop")}, after...)
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, events...)
				fmt.Fprint(w, "data: [DONE]\n\n")
			})
			var deltas string
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), func(s string) { deltas += s })
			if err != nil {
				t.Fatalf("an answer whole at its finish_reason failed: %v", err)
			}
			if resp.Content != `{"a":1}` || deltas != `{"a":1}` || resp.FinishReason != "stop" ||
				resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 5 {
				t.Fatalf("response %+v, deltas %q: chunks after the finish_reason changed the answer", resp, deltas)
			}
		})
	}
}

// Gateways in front of Gemini send finish_reason "stop" on every chunk, and
// may send a usage chunk part-way: every chunk's content is part of the
// answer, wherever the usage chunks fall. (Found by review: a drain begun at
// a usage chunk part-way ignored the rest of the answer.)
func TestOpenAIFinishReasonOnEveryChunkKeepsTheWholeAnswer(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, chunk("Hello", "stop"), usageChunk, chunk(" wor", "stop"), chunk("ld", "stop"), usageChunk)
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello world" || resp.FinishReason != "stop" || resp.Usage.PromptTokens != 11 {
		t.Fatalf("response %+v", resp)
	}
}
