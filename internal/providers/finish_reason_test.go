package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// brokenChunks is a stream that OpenRouter, Mistral or vLLM ends after an
// upstream failure: text, then a chunk whose finish_reason says the
// generation broke off, then the usage billed for it.
func brokenChunks(finish string) []string {
	return []string{
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[{"index":0,"delta":{"role":"assistant","content":"Step 1: unplug the router. Step 2: wa"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[{"index":0,"delta":{"content":""},"finish_reason":"` + finish + `"}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[],"usage":` + billedUsageJSON + `}`,
		"[DONE]",
	}
}

// A stream that ends with finish_reason "error" (OpenRouter, Mistral),
// "abort" (vLLM) or any reason that does not say the answer is whole was
// returned as a complete Response: its truncated text could win, be stored
// and replayed. It is a known-outcome stream_cut now, failed over, with the
// usage billed for it and the finish reason as its code. Found by review.
func TestOpenAIStreamBrokenOffFinishReasonIsStreamCut(t *testing.T) {
	for _, finish := range []string{"error", "abort", "insufficient_system_resource"} {
		t.Run(finish, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, brokenChunks(finish)...)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if resp != nil {
				t.Fatalf("a stream ended with finish_reason %q came back as an answer: %q", finish, resp.Content)
			}
			e := assertKind(t, err, KindStreamCut, FaultProvider, ActionFailover, false)
			if !e.Received || e.Code != finish {
				t.Fatalf("received %v code %q, want true %q (%v)", e.Received, e.Code, finish, e)
			}
			assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "gen-1", "gpt-billed")
		})
	}
}

// The unstreamed form (HTTP 200, finish_reason "error") was a complete
// Response too. It is malformed_response now (as an answer without a stop
// reason is), billed, failed over. Found by review.
func TestOpenAICompleteBrokenOffFinishReasonIsMalformed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"gen-1","object":"chat.completion","created":1,"model":"gpt-billed","choices":[{"index":0,"message":{"role":"assistant","content":"Step 1: unplug the router. Step 2: wa"},"finish_reason":"error","error":{"code":502,"message":"Provider disconnected unexpectedly"}}],"usage":` + billedUsageJSON + `}`))
	})
	resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if resp != nil {
		t.Fatalf("finish_reason \"error\" came back as an answer: %q", resp.Content)
	}
	e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
	if !e.Received || e.Code != "error" {
		t.Fatalf("received %v code %q, want true \"error\" (%v)", e.Received, e.Code, e)
	}
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "gen-1", "gpt-billed")
}

// OpenRouter sends the upstream error as a top-level "error" object beside
// the last chunk's choices; go-openai decodes that chunk as an ordinary one
// and drops the object. The attempt now fails as that error (a 502, "server
// error": retried), with what it knew of the stream, and the error's message.
// Found by review.
func TestOpenAIStreamErrorObjectBesideAChunkIsThatError(t *testing.T) {
	for _, errObj := range []string{
		`{"code":502,"message":"Provider disconnected unexpectedly"}`,
		`{"code":"server_error","message":"Provider disconnected unexpectedly"}`,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w,
				`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","choices":[{"index":0,"delta":{"role":"assistant","content":"The first half of the ans"},"finish_reason":null}]}`,
				`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-billed","error":`+errObj+`,"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],"usage":`+billedUsageJSON+`}`,
				"[DONE]")
		})
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatalf("%s: came back as an answer: %q", errObj, resp.Content)
		}
		e := assertKind(t, err, KindServerError, FaultProvider, ActionRetry, false)
		if !e.Received || !strings.Contains(e.Message, "Provider disconnected unexpectedly") {
			t.Fatalf("%s: received %v message %q", errObj, e.Received, e.Message)
		}
		assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "gen-1", "gpt-billed")
	}
}

// The finish reasons that say an answer is whole still give one, streamed
// or not; an unstreamed answer that names none is taken as before.
func TestOpenAIWholeFinishReasonsStillAnswer(t *testing.T) {
	for _, finish := range []string{"stop", "length"} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w, chunk("hi", ""), chunk("", finish), "[DONE]")
		})
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if err != nil || resp.FinishReason != finish {
			t.Fatalf("stream ended with %q: %v %+v", finish, err, resp)
		}
	}
	for _, finish := range []string{`"stop"`, `"length"`, `null`} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"x","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":` + finish + `}]}`))
		})
		resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		if err != nil || resp.Content != "hi" {
			t.Fatalf("answer with finish_reason %s: %v %+v", finish, err, resp)
		}
	}
}

// An Anthropic stop reason the adapter does not know was passed through as
// the finish reason, and the answer returned whole; chat.Judge now refuses
// such a reason, so the adapter fails it first, as a known outcome with its
// usage (stream_cut streamed, malformed_response not).
func TestAnthropicUnknownStopReasonIsNotAnAnswer(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "half an ans", StopReason: "aborted_by_upstream", InputTokens: 12, OutputTokens: 7}))
	for stream, kind := range map[bool]Kind{true: KindStreamCut, false: KindMalformedResponse} {
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		resp, err := p.Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatalf("stream=%v: stop_reason aborted_by_upstream came back as an answer (finish %q)", stream, resp.FinishReason)
		}
		e := assertKind(t, err, kind, FaultProvider, ActionFailover, false)
		if !e.Received || e.Code != "aborted_by_upstream" {
			t.Fatalf("stream=%v: received %v code %q", stream, e.Received, e.Code)
		}
		assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "msg_fake1", "claude-test-1")
	}
}

// The allow-list both adapters and chat.Judge use.
func TestCompleteFinishReason(t *testing.T) {
	for reason, whole := range map[string]bool{
		"": true, "stop": true, "length": true, "tool_calls": true, "function_call": true,
		"error": false, "abort": false, "content_filter": false, "insufficient_system_resource": false,
		"null": false, "end_turn": false, "STOP": false,
	} {
		if got := CompleteFinishReason(reason); got != whole {
			t.Errorf("CompleteFinishReason(%q) = %v, want %v", reason, got, whole)
		}
	}
}
