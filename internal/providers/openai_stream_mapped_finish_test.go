package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A stream whose finish_reason is one of the whole endings the adapter maps
// onto "stop" or "length" (wholeFinishReason: TGI's "eos_token", a Bedrock
// or OpenRouter gateway's "end_turn", Mistral's "model_length"), followed by
// its usage chunk and then held open without [DONE], is as whole as the
// same stream ending at "stop" (TestStreamUsageThenHeldOpenIsWhole): it
// must be returned after the short drain (250 ms), not held until
// stream_idle_timeout (15 s by default, an hour here) or the job's deadline
// (5 s here), whichever comes first.
func TestStreamMappedFinishUsageThenHeldOpenIsWhole(t *testing.T) {
	for _, finish := range []string{"stop", "end_turn", "eos_token", "max_tokens"} {
		t.Run(finish, func(t *testing.T) {
			gone := make(chan struct{})
			events := []string{chunk("the whole", ""), chunk(" answer", ""), chunk("", finish), usageChunk}
			p := newTestAdapter(t, heldOpenAfter(t, gone, events...), func(cfg *OpenAIConfig) {
				cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Hour, time.Hour
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := p.CompleteStream(ctx, testRequest(), nil)
			if ctx.Err() != nil {
				t.Fatalf("finish_reason %q: the read went on until the job's deadline (%v), then: %v", finish, ctx.Err(), err)
			}
			if err != nil {
				t.Fatalf("finish_reason %q: the whole answer failed: %v", finish, err)
			}
			if resp.Content != "the whole answer" {
				t.Fatalf("got %q, want the whole answer", resp.Content)
			}
			<-gone
		})
	}
}

// The best-effort read after the usage chunk (TestOpenAIChunksAfterUsageChunkIgnored)
// holds for "stop" only: after "end_turn" or "eos_token" (whole endings the
// adapter itself reports as "stop"), an error chunk after the usage chunk
// fails the whole, billed answer, and the job fails over and pays twice.
func TestStreamMappedFinishErrorAfterUsageIgnored(t *testing.T) {
	errLine := `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`
	for _, finish := range []string{"stop", "end_turn", "eos_token"} {
		t.Run(finish, func(t *testing.T) {
			events := []string{chunk(`{"a":1}`, ""), chunk("", finish), usageChunk, errLine}
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, events...)
				fmt.Fprint(w, "data: [DONE]\n\n")
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("finish_reason %q: an answer whole at its finish_reason and usage chunk failed: %v", finish, err)
			}
			if resp.Content != `{"a":1}` || resp.FinishReason != "stop" {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}

// The job's deadline or a cancellation after a whole answer's finish_reason
// on an empty delta, before its usage chunk (a server that ignores
// include_usage and holds the connection open), returns the answer, as it
// does for "stop": so for the whole endings the adapter maps onto "stop" or
// "length".
func TestStreamMappedFinishCancelledBeforeUsageIsWhole(t *testing.T) {
	for _, finish := range []string{"stop", "end_turn", "eos_token", "model_length"} {
		t.Run(finish, func(t *testing.T) {
			last := chunk("", finish)
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startStream(w)
				sse(w, chunk("the whole", ""), chunk(" answer", ""), last)
				<-r.Context().Done() // neither usage nor [DONE]: held open, silent
			})
			read := make(chan struct{}) // the client has read the finish_reason's chunk
			hc := &http.Client{Transport: signalTransport{base: http.DefaultTransport, marker: []byte("data: " + last + "\n\n"), seen: read}}
			p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) {
				cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout, cfg.HTTPClient = true, 2*time.Hour, time.Hour, hc
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { <-read; cancel() }() // the job's deadline, or a hedge loser's cut
			resp, err := p.CompleteStream(ctx, testRequest(), nil)
			if err != nil {
				t.Fatalf("finish_reason %q: the whole answer failed at the cancellation: %v", finish, err)
			}
			if resp.Content != "the whole answer" || resp.FinishReason != wholeFinishReason(finish) {
				t.Fatalf("got %q (%s), want the whole answer (%s)", resp.Content, resp.FinishReason, wholeFinishReason(finish))
			}
		})
	}
}

// The cut of a stream whose finish_reason came on chunks of the answer
// quotes the provider's own word, not the name the adapter maps it onto.
func TestStreamCutBeforeDoneQuotesProvidersFinishWord(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, chunk("Step 1:", "end_turn"), chunk(" Step 2:", "end_turn")) // then the body ends, without [DONE]
	})
	_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if err == nil || !strings.Contains(err.Error(), `finish_reason "end_turn" came on chunks of the answer`) {
		t.Fatalf("got %v, want the cut quoting the provider's finish_reason \"end_turn\"", err)
	}
}
