package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// deltaLog collects onDelta calls.
type deltaLog struct {
	mu     sync.Mutex
	deltas []string
}

func (d *deltaLog) add(s string) {
	d.mu.Lock()
	d.deltas = append(d.deltas, s)
	d.mu.Unlock()
}

func (d *deltaLog) joined() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.deltas, "")
}

// blockingStreamServer sends events then blocks until the client goes away or
// the test ends.
func blockingStreamServer(t *testing.T, events ...string) string {
	srv := newFakeServer(t, nil)
	release := releaseAtCleanup(t)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, events...)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	return srv.URL
}

func TestOpenAIStreamFailures(t *testing.T) {
	t.Run("timeout mid-stream", func(t *testing.T) {
		url := blockingStreamServer(t, chunk(`{"a":`, ""))
		p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Timeout = 200 * time.Millisecond })
		var d deltaLog
		resp, err := p.CompleteStream(context.Background(), testRequest(), d.add)
		if resp != nil {
			t.Fatal("incomplete stream returned a response")
		}
		// Bytes came before the deadline: a known outcome, failover allowed.
		e := assertKind(t, err, KindStreamTimeout, FaultProvider, ActionFailover, false)
		if !e.Received {
			t.Fatalf("a stream cut by the total timeout after its headers is not marked Received: %+v", e)
		}
		// The chunk normally arrives before the deadline; asserting it would be
		// a timing assumption, so only a wrong delta fails.
		if got := d.joined(); got != "" && got != `{"a":` {
			t.Fatalf("deltas before the timeout: %q", got)
		}
	})

	t.Run("no first byte", func(t *testing.T) {
		srv := newFakeServer(t, nil)
		release := releaseAtCleanup(t)
		srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		// The first-byte deadline passes once the request was sent
		// (firstByteOnceSent), not after 50 ms that a loaded machine spent
		// connecting.
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.FirstByteTimeout = time.Hour; c.Timeout = 2 * time.Hour })
		_, err := p.CompleteStream(firstByteOnceSent(t, context.Background()), testRequest(), nil)
		e := assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, true)
		if e.Received || !strings.Contains(e.Message, "first_byte_timeout") {
			t.Fatalf("first-byte timeout: %+v", e)
		}
	})

	t.Run("stall", func(t *testing.T) {
		url := blockingStreamServer(t, chunk(`{"a":`, ""))
		p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.StreamIdleTimeout = 50 * time.Millisecond })
		resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatal("stalled stream returned a response")
		}
		assertKind(t, err, KindStreamStalled, FaultProvider, ActionFailover, false)
	})

	t.Run("stall before the first chunk", func(t *testing.T) {
		url := blockingStreamServer(t)
		p := newTestAdapter(t, url, func(c *OpenAIConfig) {
			c.StreamIdleTimeout = 50 * time.Millisecond
			c.Timeout = time.Minute
		})
		_, err := p.CompleteStream(context.Background(), testRequest(), nil)
		assertKind(t, err, KindStreamStalled, FaultProvider, ActionFailover, false)
	})

	streamRows := []struct {
		name   string
		body   string
		kind   Kind
		fault  Fault
		action Action
	}{
		{"cut without finish_reason or DONE",
			"data: " + chunk(`{"a":`, "") + "\n\ndata: " + chunk(`1`, "") + "\n\n",
			KindStreamCut, FaultProvider, ActionFailover},
		{"cut with DONE but no finish_reason",
			"data: " + chunk(`{"a":1}`, "") + "\n\ndata: [DONE]\n\n",
			KindStreamCut, FaultProvider, ActionFailover},
		{"malformed chunk",
			"data: " + chunk(`{"a":`, "") + "\n\ndata: {\"id\":\"chatcmpl-s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n",
			KindStreamMalformed, FaultProvider, ActionFailover},
		{"error event mid-stream",
			"data: " + chunk(`{"a":`, "") + "\n\ndata: " + apiErrorBody("The server had an error while processing your request.", "server_error", nil, nil) + "\n\n",
			KindServerError, FaultProvider, ActionRetry},
		{"content filter finish",
			"data: " + chunk(`{"a":`, "content_filter") + "\n\ndata: [DONE]\n\n",
			KindContentPolicy, FaultCaller, ActionStop},
	}
	for _, r := range streamRows {
		t.Run(r.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				w.Write([]byte(r.body))
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = time.Minute })
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if resp != nil {
				t.Fatalf("incomplete stream returned a response: %+v", resp)
			}
			assertKind(t, err, r.kind, r.fault, r.action, false)
		})
	}
}

func TestOpenAIStreamSuccess(t *testing.T) {
	var got map[string]any
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode request: %v", err)
		}
		startStream(w)
		sse(w,
			`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
			chunk(`{"a":`, ""), chunk(`1}`, ""), chunk("", "stop"),
			`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}`,
			"[DONE]")
	})
	for _, viaComplete := range []bool{false, true} {
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = time.Minute; c.Stream = viaComplete })
		var d deltaLog
		var resp *Response
		var err error
		if viaComplete {
			resp, err = p.Complete(context.Background(), testRequest())
		} else {
			resp, err = p.CompleteStream(context.Background(), testRequest(), d.add)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := Response{Content: `{"a":1}`, Model: "gpt-test-0613", ResponseID: "chatcmpl-s", FinishReason: "stop",
			Created: time.Unix(1700000001, 0), Usage: Usage{PromptTokens: 12, CompletionTokens: 4, TotalTokens: 16}}
		if resp.FirstByte <= 0 {
			t.Fatalf("time to first byte not measured: %+v", *resp)
		}
		resp.FirstByte = 0
		if !reflect.DeepEqual(*resp, want) {
			t.Fatalf("got %+v\nwant %+v", *resp, want)
		}
		if !viaComplete && d.joined() != `{"a":1}` {
			t.Fatalf("deltas %q", d.joined())
		}
		if got["stream"] != true {
			t.Fatalf("stream not requested: %v", got["stream"])
		}
		if so, _ := got["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Fatalf("stream_options: %v", got["stream_options"])
		}
	}
}
