package providers

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// An error status whose body breaks off is classified by its status, not as
// a connection reset: a 400 is not retried on the same model (SPEC §6.2),
// and a 429 keeps its Retry-After. Over real HTTP, streamed or not.
func TestErrorStatusWithBrokenBodyKeepsItsMeaning(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   Kind
		action Action
	}{
		{400, KindBadRequest, ActionStop},
		{429, KindRateLimited, ActionRetry},
		{503, KindUnavailable, ActionRetry},
	} {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "500") // promises more than it sends
				w.Header().Set("Retry-After", "9")
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(`{"error":{"message":"cut`))
				w.(http.Flusher).Flush()
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			})
			p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) { cfg.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || e.Action != c.action || e.StatusCode != c.status || !strings.Contains(e.Message+e.ProviderMessage, "incomplete") {
				t.Errorf("HTTP %d, stream %v: %s / %s / status %d: %q", c.status, stream, e.Kind, e.Action, e.StatusCode, e.Message)
			}
			if c.status != 400 && e.RetryAfter != 9*time.Second {
				t.Errorf("HTTP %d, stream %v: Retry-After %s, want 9s", c.status, stream, e.RetryAfter)
			}
		}
	}
}

// cutBody answers status with Content-Type ctype and the headers hdr, writes
// partial of a body that promises 500 bytes, then resets the connection.
func cutBody(status int, ctype string, hdr map[string]string, partial string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: 500\r\n", status, http.StatusText(status), ctype)
		for k, v := range hdr {
			fmt.Fprintf(buf, "%s: %s\r\n", k, v)
		}
		fmt.Fprintf(buf, "\r\n%s", partial)
		_ = buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with a reset
		}
		conn.Close()
	}
}

// The Anthropic adapter, like the OpenAI-compatible one, classifies an error
// status whose body breaks off by its status, with its retry-after: not as a
// body broken off a 2xx answer (malformed_response, stream_cut) with no
// status. Found by review.
func TestAnthropicErrorStatusWithBrokenBodyKeepsItsMeaning(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   Kind
		action Action
	}{
		{400, KindBadRequest, ActionStop},
		{429, KindRateLimited, ActionRetry},
		{529, KindUnavailable, ActionRetry},
	} {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, cutBody(c.status, "application/json", map[string]string{"retry-after": "9"}, `{"type":"error","error":{"type":"`))
			p := newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || e.Action != c.action || e.StatusCode != c.status || !strings.Contains(e.Message+e.ProviderMessage, "incomplete") {
				t.Errorf("HTTP %d, stream %v: %s / %s / status %d, want %s / %s: %q", c.status, stream, e.Kind, e.Action, e.StatusCode, c.kind, c.action, e.Message)
			}
			if c.status != 400 && e.RetryAfter != 9*time.Second {
				t.Errorf("HTTP %d, stream %v: Retry-After %s, want 9s", c.status, stream, e.RetryAfter)
			}
		}
	}
}

// Anthropic's error type and code are bounded like the OpenAI adapter's.
func TestAnthropicErrorCodeIsBounded(t *testing.T) {
	huge := strings.Repeat("x", 200_000)
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: huge, ErrorMessage: "no"}))
	_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = false }).Complete(context.Background(), testRequest())
	if e := mustError(t, err); len(e.Code) > maxCode || e.Code == "" {
		t.Fatalf("code of %d bytes", len(e.Code))
	}
}
