package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The provider's id of a failed request (Anthropic's request-id header or
// body request_id, an OpenAI-compatible provider's x-request-id) is what an
// operator quotes to the provider's support about a 500 or a 529. It was
// thrown away: fromAnthropicError dropped the SDK's RequestID, and nothing
// read x-request-id. It is kept in Error.ProviderRequestID, out of the
// message.

// wantRequestID fails t unless e carries id in ProviderRequestID and nowhere
// in its text.
func wantRequestID(t *testing.T, e *Error, id string) {
	t.Helper()
	if e.ProviderRequestID != id {
		t.Errorf("ProviderRequestID %q, want %q (%v)", e.ProviderRequestID, id, e)
	}
	if id != "" && (strings.Contains(e.Error(), id) || strings.Contains(e.Message, id)) {
		t.Errorf("the request id %q is in the error's text: %q", id, e.Error())
	}
}

func TestAnthropicErrorProviderRequestID(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		header string // request-id
		body   string
		want   string
	}{
		{"500 header", 500, "req_011CHeader500", `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CHeader500"}`, "req_011CHeader500"},
		{"529 header", 529, "req_011CHeader529", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "req_011CHeader529"},
		{"529 body only", 529, "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CBodyOnly"}`, "req_011CBodyOnly"},
		{"400 none", 400, "", `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`, ""},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", c.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					hdr := map[string]string{}
					if c.header != "" {
						hdr["request-id"] = c.header
					}
					writeError(w, c.status, hdr, c.body)
				})
				p := newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.StatusCode != c.status {
					t.Fatalf("precondition: status %d, want %d (%v)", e.StatusCode, c.status, e)
				}
				wantRequestID(t, e, c.want)
			})
		}
	}
}

// An error event inside an Anthropic stream names no request: the id is the
// stream's response's request-id header.
func TestAnthropicStreamErrorEventProviderRequestID(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("request-id", "req_011CStreamEvent")
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		)
	})
	_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindUnavailable {
		t.Fatalf("precondition: kind %s, want %s (%v)", e.Kind, KindUnavailable, e)
	}
	wantRequestID(t, e, "req_011CStreamEvent")
}

func TestOpenAIErrorProviderRequestID(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		header string // x-request-id
		want   string
	}{
		{"500", 500, "req_5f3a9c0e1b2d4f6a8c0e1b2d4f6a8c0e", "req_5f3a9c0e1b2d4f6a8c0e1b2d4f6a8c0e"},
		{"503", 503, "a1b2c3d4-vllm", "a1b2c3d4-vllm"},
		{"429 none", 429, "", ""},
		{"hostile", 500, "req_\u200b" + strings.Repeat("x", 300), "req_" + strings.Repeat("x", maxRequestID-4)},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", c.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					hdr := map[string]string{}
					if c.header != "" {
						hdr["x-request-id"] = c.header
					}
					writeError(w, c.status, hdr, apiErrorBody("The server had an error while processing your request.", "server_error", nil, nil))
				})
				p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) { cfg.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.StatusCode != c.status {
					t.Fatalf("precondition: status %d, want %d (%v)", e.StatusCode, c.status, e)
				}
				wantRequestID(t, e, c.want)
			})
		}
	}
}

// An error an OpenAI-compatible provider reports inside its stream (an
// "error" object after chunks began) takes the id of the stream's response.
func TestOpenAIStreamErrorEventProviderRequestID(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("x-request-id", "gen-1733462400-StreamEvent")
		startStream(w)
		sse(w, chunk("hel", ""), `{"error":{"message":"Upstream provider overloaded","type":"server_error","code":502}}`)
	})
	_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind == KindStreamCut || e.Kind == KindStreamMalformed {
		t.Fatalf("precondition: the error event is not classified as the provider's error: %v", e)
	}
	wantRequestID(t, e, "gen-1733462400-StreamEvent")
}

// A 200 answer that is an error object (no choices) takes the answer's id
// too.
func TestOpenAIAnsweredErrorProviderRequestID(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusOK, map[string]string{"x-request-id": "req_AnsweredError"},
			apiErrorBody("The server had an error while processing your request.", "server_error", nil, nil))
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	wantRequestID(t, mustError(t, err), "req_AnsweredError")
}

// A redirect's id is not the request that failed: a followed 307 that named
// one, then a connection closed before any response, leaves it unset.
func TestProviderRequestIDNotTheRedirects(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/moved") {
			w.Header().Set("x-request-id", "req_Redirect")
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close() // no response: the call fails on the redirected request
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.StatusCode != 0 || e.Fault != FaultNetwork {
		t.Fatalf("precondition: want a network failure without a status, got %v", e)
	}
	wantRequestID(t, e, "")
}

// An Anthropic gateway's 200 whose body is Anthropic's error object, to a
// streamed call or not, takes the answer's request id too.
func TestAnthropicAnsweredErrorProviderRequestID(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				writeError(w, http.StatusOK, map[string]string{"request-id": "req_011CAnswered"},
					`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			})
			p := newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != KindUnavailable {
				t.Fatalf("precondition: kind %s, want unavailable (%v)", e.Kind, e)
			}
			wantRequestID(t, e, "req_011CAnswered")
		})
	}
}
