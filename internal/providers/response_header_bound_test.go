package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// The headers of a provider's response are bounded too (SPEC §17): the
// adapters' transport (NewTransport) took net/http's default of 10 MiB, so
// a target configured with max_response_bytes: 64 KiB still buffered a
// 4 MiB header and its answer won. Headers past maxResponseHeaderBytes fail
// the call as a body past max_response_bytes does (response_too_large,
// received, failed over), for both adapters; a header of some KiB is read.
func TestResponseHeadersAreBounded(t *testing.T) {
	const limit = 64 << 10
	for _, size := range []int{4 << 20, maxResponseHeaderBytes + 1, 8 << 10} {
		big := strings.Repeat("a", size)
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Debug", big)
			if strings.HasSuffix(r.URL.Path, "/messages") {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(completionBody))
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = limit })
		pa := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.MaxResponseBytes = limit })
		for _, call := range []struct {
			name string
			do   func() (*Response, error)
		}{
			{"openai", func() (*Response, error) { return p.Complete(context.Background(), testRequest()) }},
			{"openai stream", func() (*Response, error) { return p.CompleteStream(context.Background(), testRequest(), nil) }},
			{"anthropic", func() (*Response, error) { return pa.Complete(context.Background(), testRequest()) }},
		} {
			resp, err := call.do()
			if size <= maxResponseHeaderBytes {
				if err != nil {
					t.Errorf("%s: a %d-byte header failed the call: %v", call.name, size, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: a %d-byte response header was read whole, and the answer %q won", call.name, size, resp.Content)
				continue
			}
			e := mustError(t, err)
			if e.Kind != KindResponseTooLarge || e.Action != ActionFailover || !e.Received || !strings.Contains(e.Message, "response headers are larger than") {
				t.Errorf("%s: a %d-byte header: got %s/%s received=%v %q, want response_too_large, failover, received, naming the headers",
					call.name, size, e.Kind, e.Action, e.Received, e.Message)
			}
		}
	}
}
