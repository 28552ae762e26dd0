package providers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A base_url with a query (a gateway's ?api-version=…, a proxy's tenant) was
// accepted by the configuration, and the Anthropic adapter then lost it: the
// SDK appended v1/messages to the query (tenant=a/v1/messages), and the
// request went to the proxy's root. The query is sent with every request,
// after the path, as the OpenAI-compatible adapter sends it.
func TestAnthropicBaseURLQueryIsSent(t *testing.T) {
	fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hi"}))
	to, err := url.Parse(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(to)
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Path != "/proxy/v1/messages" || r.URL.Query().Get("tenant") != "a" || r.URL.Query().Get("api-version") != "2024-10-21" {
			writeError(w, 404, nil, `{"type":"error","error":{"type":"not_found_error","message":"no such route"}}`)
			return
		}
		r.URL.Path = "/v1/messages"
		proxy.ServeHTTP(w, r)
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			p := newAnthropicAdapter(t, srv.URL+"/proxy/?tenant=a&api-version=2024-10-21", func(c *AnthropicConfig) { c.Stream = stream })
			resp, err := p.Complete(context.Background(), testRequest())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Fatalf("%v (requests: %q)", err, seen)
			}
			if resp.Content != "hi" {
				t.Fatalf("content %q, want hi", resp.Content)
			}
			if last := seen[len(seen)-1]; !strings.HasPrefix(last, "POST /proxy/v1/messages?") {
				t.Fatalf("asked %q", last)
			}
		})
	}
}
