package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A request's service_tier and safety_identifier reach an OpenAI-compatible
// provider, and the service_tier its answer names comes back on the
// Response (streamed or not). A request that sets neither sends neither.
// Found by review (rchat2 #6).
func TestServiceTierAndSafetyIdentifierSent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var mu sync.Mutex
		var bodies []map[string]any
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var body map[string]any
			_ = json.Unmarshal(b, &body)
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
			if !stream {
				writeError(w, http.StatusOK, nil, strings.Replace(completionBody, `"object":"chat.completion",`, `"object":"chat.completion","service_tier":"flex",`, 1))
				return
			}
			startStream(w)
			withTier := func(c string) string {
				return strings.Replace(c, `"object":"chat.completion.chunk",`, `"object":"chat.completion.chunk","service_tier":"flex",`, 1)
			}
			sse(w, withTier(chunk("{\"a\":1}", "")), withTier(chunk("", "stop")),
				`{"id":"chatcmpl-s","object":"chat.completion.chunk","service_tier":"flex","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
				"[DONE]")
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		call := func(req *Request) *Response {
			t.Helper()
			var resp *Response
			var err error
			if stream {
				resp, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				resp, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		req := testRequest()
		req.ServiceTier, req.SafetyIdentifier = "flex", "user-7f3a"
		if resp := call(req); resp.ServiceTier != "flex" {
			t.Fatalf("stream %v: service tier of the answer %q", stream, resp.ServiceTier)
		}
		call(testRequest())
		mu.Lock()
		if got := bodies[0]; got["service_tier"] != "flex" || got["safety_identifier"] != "user-7f3a" {
			t.Errorf("stream %v: sent %v", stream, got)
		}
		if got := bodies[1]; got["service_tier"] != nil || got["safety_identifier"] != nil {
			t.Errorf("stream %v: a request without them sent %v", stream, got)
		}
		mu.Unlock()
	}
}

func TestTopString(t *testing.T) {
	for body, want := range map[string]string{
		`{"service_tier":"flex"}`:                             "flex",
		`{"a":{"service_tier":"x"},"service_tier":"default"}`: "default",
		`{"a":{"service_tier":"x"}}`:                          "",
		`{"service_tier":"a","service_tier":"b"}`:             "b",
		`{"service_tier":null}`:                               "",
		`{"service_tier":7}`:                                  "",
		`{"x":["service_tier"], "service_tier" : "s\u00e9"}`:  "sé",
		`["service_tier"]`:                                    "",
	} {
		if got := topString([]byte(body), "service_tier"); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
	if got := providerServiceTier(strings.Repeat("é", 40)); len(got) != 64 {
		t.Errorf("clipped to %d bytes", len(got))
	}
}
