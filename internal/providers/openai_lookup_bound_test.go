package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// lookupList is a stored-completions list holding one completion of attempt
// att-big whose content is n bytes.
func lookupList(n int) string {
	return `{"object":"list","data":[{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test-0613",` +
		`"metadata":{"router_attempt_id":"att-big","router_job_id":"job-1"},` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("a", n) + `"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}],"has_more":false}`
}

// Lookup read at most 8 MiB of the list whatever max_response_bytes said:
// a larger answer was cut there without a word, and reported as a list that
// does not decode. The configured bound alone applies: within it the stored
// answer is found; past it the lookup is response_too_large, as any call's
// answer is. Found by review.
func TestOpenAILookupHonoursMaxResponseBytes(t *testing.T) {
	const size = 9 << 20 // past the old cut
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, lookupList(size))
	})

	p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) {
		c.SupportsLookup = true
		c.MaxResponseBytes = 16 << 20
	})
	resp, found, err := p.Lookup(context.Background(), "att-big")
	if err != nil || !found || len(resp.Content) != size {
		n := -1
		if resp != nil {
			n = len(resp.Content)
		}
		t.Fatalf("found=%v, content of %d bytes, err=%v: want the stored answer of %d bytes, found", found, n, err, size)
	}

	p = newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) {
		c.SupportsLookup = true
		c.MaxResponseBytes = 1 << 20
	})
	resp, found, err = p.Lookup(context.Background(), "att-big")
	if resp != nil || found {
		t.Fatalf("found=%v with a list past max_response_bytes", found)
	}
	assertKind(t, err, KindResponseTooLarge, FaultProvider, ActionFailover, false)
}
