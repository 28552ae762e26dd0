package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// newH2Server starts a TLS server speaking HTTP/2 (what NewTransport
// negotiates with OpenAI and Anthropic), closed at cleanup.
func newH2Server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// h2Adapters are both adapters on srv, streamed or not.
func h2Adapters(t *testing.T, srv *httptest.Server, stream bool) map[string]Provider {
	return map[string]Provider{
		"openai":    newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = stream; c.HTTPClient = srv.Client() }),
		"anthropic": newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream; c.HTTPClient = srv.Client() }),
	}
}

// Over HTTP/2 a stream reset (RST_STREAM) before any response byte is the
// same event as a TCP reset over HTTP/1.1: connection_reset, retried (SPEC
// §6.2), not kind unknown. Found by review.
func TestHTTP2ResetBeforeHeadersIsAConnectionReset(t *testing.T) {
	srv := newH2Server(t, func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
	})
	for _, stream := range []bool{false, true} {
		for adapter, p := range h2Adapters(t, srv, stream) {
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != KindConnReset || e.Action != ActionRetry {
				t.Errorf("%s stream=%v: %s/%s, want connection_reset/retry (%q)", adapter, stream, e.Kind, e.Action, e.Message)
			}
		}
	}
}

// After response bytes, the same reset is an answer broken off, as over
// HTTP/1.1: malformed_response, or stream_cut for a stream, failed over.
func TestHTTP2ResetAfterBytesIsACut(t *testing.T) {
	srv := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"id":"x",`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	for _, stream := range []bool{false, true} {
		want := KindMalformedResponse
		if stream {
			want = KindStreamCut
		}
		for adapter, p := range h2Adapters(t, srv, stream) {
			_, err := p.Complete(context.Background(), testRequest())
			if e := mustError(t, err); e.Kind != want || e.Action != ActionFailover {
				t.Errorf("%s stream=%v: %s/%s, want %s/failover (%q)", adapter, stream, e.Kind, e.Action, want, e.Message)
			}
		}
	}
}

// A GOAWAY or a lost HTTP/2 connection before an answer is a reset too.
func TestHTTP2ConnectionGoneIsAConnectionReset(t *testing.T) {
	for _, err := range []error{
		errors.New("http2: client connection lost"),
		errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=""`),
		errors.New("stream error: stream ID 3; REFUSED_STREAM; received from peer"),
	} {
		if e := classifyTransport("p", err); e.Kind != KindConnReset {
			t.Errorf("%v: %s, want connection_reset", err, e.Kind)
		}
	}
}
