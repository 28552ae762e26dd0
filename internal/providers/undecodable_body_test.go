package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// undecodableBodies are response bodies sent with Content-Encoding: gzip that
// do not decode: no gzip header at all (gzip.ErrHeader), and a gzip header
// followed by bytes that are not deflate data (flate.CorruptInputError).
var undecodableBodies = map[string]string{
	"not gzip":        "this is not gzip at all, not even close to it",
	"corrupt deflate": "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff",
}

// gzipServer answers every request with status and body, declared as gzip.
// net/http's transport asked for gzip and decodes it itself, so the adapter
// sees the decoding's error when it reads the body.
func gzipServer(t *testing.T, status int, body string) string {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		if status == http.StatusOK && strings.Contains(r.Header.Get("Accept"), "event-stream") || status == http.StatusOK && r.URL.Query().Get("stream") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	return srv.URL
}

// A 200 whose gzip body does not decode was kind unknown, not received, with
// the message "gzip: invalid header" (streamed: stream_cut, "stream broken
// after 0 chunks: gzip: invalid header"): the provider answered, and what it
// answered cannot be read. It is malformed_response (stream_malformed for a
// stream), received, failed over, with a message that says the HTTP 200 body
// does not decode — in both adapters. Found by review.
func TestUndecodableGzipBody(t *testing.T) {
	for name, body := range undecodableBodies {
		for _, stream := range []bool{false, true} {
			mode := name + "/complete"
			kind := KindMalformedResponse
			if stream {
				mode, kind = name+"/stream", KindStreamMalformed
			}
			t.Run("openai/"+mode, func(t *testing.T) {
				p := newTestAdapter(t, gzipServer(t, http.StatusOK, body), func(c *OpenAIConfig) { c.Stream = stream })
				resp, err := p.Complete(context.Background(), testRequest())
				checkUndecodable(t, resp, err, kind)
			})
			t.Run("anthropic/"+mode, func(t *testing.T) {
				p := newAnthropicAdapter(t, gzipServer(t, http.StatusOK, body), func(c *AnthropicConfig) { c.Stream = stream })
				resp, err := p.Complete(context.Background(), testRequest())
				checkUndecodable(t, resp, err, kind)
			})
		}
	}
}

func checkUndecodable(t *testing.T, resp *Response, err error, kind Kind) {
	t.Helper()
	if resp != nil {
		t.Fatalf("a response %+v from a body that does not decode", resp)
	}
	e := assertKind(t, err, kind, FaultProvider, ActionFailover, false)
	if !e.Received || !strings.Contains(e.Message, "HTTP 200 response body does not decode: ") ||
		!strings.Contains(e.Message, "gzip") && !strings.Contains(e.Message, "flate") {
		t.Fatalf("error %v (received %v): want a received failure whose message says the HTTP 200 body does not decode, and why", e, e.Received)
	}
}

// An error status whose gzip body does not decode is classified by its
// status, as one whose body breaks off is: a 503 is retried, a 400 is the
// request's.
func TestUndecodableGzipErrorBody(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   Kind
		fault  Fault
		action Action
	}{
		{http.StatusServiceUnavailable, KindUnavailable, FaultProvider, ActionRetry},
		{http.StatusBadRequest, KindBadRequest, FaultCaller, ActionStop},
	} {
		for name, body := range undecodableBodies {
			t.Run(http.StatusText(c.status)+"/"+name+"/openai", func(t *testing.T) {
				_, err := newTestAdapter(t, gzipServer(t, c.status, body), nil).Complete(context.Background(), testRequest())
				e := assertKind(t, err, c.kind, c.fault, c.action, false)
				if e.StatusCode != c.status || !strings.Contains(e.Message, "does not decode") {
					t.Fatalf("error %v: want HTTP %d, with a message that says its body does not decode", e, c.status)
				}
			})
			t.Run(http.StatusText(c.status)+"/"+name+"/anthropic", func(t *testing.T) {
				_, err := newAnthropicAdapter(t, gzipServer(t, c.status, body), nil).Complete(context.Background(), testRequest())
				e := assertKind(t, err, c.kind, c.fault, c.action, false)
				if e.StatusCode != c.status || !strings.Contains(e.Message, "does not decode") {
					t.Fatalf("error %v: want HTTP %d, with a message that says its body does not decode", e, c.status)
				}
			})
		}
	}
}
