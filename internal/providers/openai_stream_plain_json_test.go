package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A server that ignores stream:true answers 200 with the whole
// chat.completion JSON. Every attempt failed "stream ended without
// finish_reason after 0 chunks" (stream_cut), though docs say loosely
// labelled answers (JSON on a stream) are read. The body is now read and
// judged as an unstreamed answer. Found by review.
func TestOpenAIStreamAnsweredWithJSONCompletion(t *testing.T) {
	for _, ct := range []string{"application/json", "text/event-stream", ""} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			fmt.Fprint(w, completionBody)
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
		var deltas []string
		resp, err := p.CompleteStream(context.Background(), testRequest(), func(d string) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatalf("content-type %q: whole JSON completion on a stream request discarded: %v", ct, err)
		}
		if resp.Content != `{"a":1}` || resp.FinishReason != "stop" || resp.Usage.TotalTokens != 16 ||
			resp.ResponseID != "chatcmpl-1" || resp.Model != "gpt-test-0613" || resp.FirstByte <= 0 {
			t.Fatalf("content-type %q: %+v", ct, resp)
		}
		if strings.Join(deltas, "") != resp.Content {
			t.Fatalf("content-type %q: deltas %q", ct, deltas)
		}
	}
}

// Such an answer is judged as an unstreamed one: a finish reason that does
// not say it is whole is malformed_response (not stream_cut), billed.
func TestOpenAIStreamAnsweredWithJSONJudged(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"half"},"finish_reason":"error"}],"usage":`+billedUsageJSON+`}`)
	})
	_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
	if !e.Received || e.Code != "error" {
		t.Fatalf("received %v code %q", e.Received, e.Code)
	}
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")
}

// A body that is not a chat.completion, and a stream cut before its first
// chunk, stay a stream without a chunk.
func TestOpenAIStreamWithoutChunksStillCut(t *testing.T) {
	for _, body := range []string{
		`{"id":"x","object":"list","data":[]}`,
		`{"status":"ok"}`,
		"data: " + chunk("", "")[:40], // a data line broken off
		"",
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		})
		_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindStreamCut && e.Kind != KindStreamMalformed || !e.Received {
			t.Fatalf("%q: kind %s received %v (%v)", body, e.Kind, e.Received, e)
		}
	}
}
