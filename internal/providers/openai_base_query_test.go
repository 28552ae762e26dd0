package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A base_url with a query (Azure's /openai/v1?api-version=preview) was
// accepted, then go-openai appended /chat/completions to the query: the
// request went to /openai/v1 with api-version=preview/chat/completions, a
// 404 blamed on the target's model. The query is sent with every request,
// after the path.
func TestBaseURLQueryIsSentWithEveryRequest(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Path != "/openai/v1/chat/completions" || r.URL.Query().Get("api-version") != "preview" {
			writeError(w, 404, nil, apiErrorBody("Resource not found", "invalid_request_error", nil, "404"))
			return
		}
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[],"has_more":false}`)
			return
		}
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			startStream(w)
			sse(w, chunk("hi", "stop"), "[DONE]")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completionBody)
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			p := newTestAdapter(t, srv.URL+"/openai/v1/?api-version=preview", func(c *OpenAIConfig) {
				c.Stream = stream
				c.SupportsLookup = true
			})
			if _, err := p.Complete(context.Background(), testRequest()); err != nil {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%v (requests: %q)", err, seen)
			}
			_, _, _ = p.Lookup(context.Background(), "att-1")
			mu.Lock()
			defer mu.Unlock()
			last := seen[len(seen)-1]
			if !strings.HasPrefix(last, "GET /openai/v1/chat/completions?") || !strings.Contains(last, "api-version=preview") ||
				!strings.Contains(last, "limit=1") {
				t.Fatalf("lookup asked %q", last)
			}
		})
	}
}

// A fragment is never sent: go-openai's paths would go into it.
func TestBaseURLWithFragmentRefused(t *testing.T) {
	_, err := NewOpenAI(OpenAIConfig{Name: "azure", BaseURL: "https://x.openai.azure.com/openai/v1#frag"})
	if err == nil || !strings.Contains(err.Error(), "fragment") {
		t.Fatalf("err %v, want a refusal naming the fragment", err)
	}
}
