package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// finishUsageChunk is a last chunk that carries the finish_reason on an
// empty delta and the usage together (DeepSeek's and Mistral's shape of
// include_usage), rather than a usage chunk without choices after it.
const finishUsageChunk = `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`

// heldOpenAfter serves the events, then neither [DONE] nor the end of the
// body: it holds the connection open, silent, until the client goes, and
// closes gone then.
func heldOpenAfter(t *testing.T, gone chan<- struct{}, events ...string) string {
	t.Helper()
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, events...)
		<-r.Context().Done()
		close(gone)
	})
	return srv.URL
}

// A stream whose answer is whole — its finish_reason, then its usage — and
// that then holds the connection open without [DONE] is returned with its
// usage as soon as the short drain after it passes: not after
// stream_idle_timeout (an hour here), not failed as a cut or a timeout, not
// by the job's deadline (the context's, which must still be alive when the
// answer comes), and the body is closed.
func TestStreamUsageThenHeldOpenIsWhole(t *testing.T) {
	for name, events := range map[string][]string{
		"finish on an empty delta, then the usage chunk": {chunk("the whole", ""), chunk(" answer", ""), chunk("", "stop"), usageChunk},
		"finish and usage on one empty-delta chunk":      {chunk("the whole", ""), chunk(" answer", ""), finishUsageChunk},
	} {
		t.Run(name, func(t *testing.T) {
			gone := make(chan struct{})
			p := newTestAdapter(t, heldOpenAfter(t, gone, events...), func(cfg *OpenAIConfig) {
				cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Hour, time.Hour
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp, err := p.CompleteStream(ctx, testRequest(), nil)
			if ctx.Err() != nil {
				t.Fatalf("the read went on until the job's deadline (%v): the whole answer waited for stream_idle_timeout", ctx.Err())
			}
			if err != nil {
				t.Fatalf("the whole answer failed: %v", err)
			}
			if resp.Content != "the whole answer" || resp.FinishReason != "stop" {
				t.Fatalf("got %q (%s), want the whole answer (stop)", resp.Content, resp.FinishReason)
			}
			if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 5 {
				t.Fatalf("usage %+v, want 11 in, 5 out", resp.Usage)
			}
			<-gone // the body was closed: the server saw its client go
		})
	}
}

// Usage beside a choice ends the answer only where a usage chunk would: a
// chunk without content after the answer began. More of the answer after it
// makes the stream whole only at [DONE], as it does after a usage chunk: the
// stream ending there, without [DONE], is cut.
func TestStreamUsageBesideChoiceStaysStrict(t *testing.T) {
	for name, events := range map[string][]string{
		"more of the answer after it":            {chunk("Step 1:", ""), finishUsageChunk, chunk(" Step 2:", "stop")},
		"more of the answer after a usage chunk": {chunk("Step 1:", ""), chunk("", "stop"), usageChunk, chunk(" Step 2:", "stop")},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startStream(w)
				sse(w, events...) // then the body ends, without [DONE]
			})
			p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) {
				cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Hour, time.Hour
			})
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if err == nil {
				t.Fatalf("returned %q (%s) as whole; want stream_cut: [DONE] did not come", resp.Content, resp.FinishReason)
			}
			if e := mustError(t, err); e.Kind != KindStreamCut || !e.Received {
				t.Fatalf("%s received %v (%v), want stream_cut received", e.Kind, e.Received, err)
			}
		})
	}
}
