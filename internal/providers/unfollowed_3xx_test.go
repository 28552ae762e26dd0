package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A 3xx the client does not follow (300, 304, a 307 with no Location) is
// not the provider's answer: go-openai and the Anthropic SDK treat only
// statuses from 400 as failures, so a 300 with a completion body was
// returned as the answer, and an empty one failed to decode as a reset
// before any response (connection_reset, retried on the same target).
// It is the target's misconfiguration, failed over. Found by review.
func TestUnfollowed3xx(t *testing.T) {
	adapters := map[string]func(t *testing.T, url string) Provider{
		"openai": func(t *testing.T, url string) Provider { return newTestAdapter(t, url, nil) },
		"anthropic": func(t *testing.T, url string) Provider {
			return newAnthropicAdapter(t, url, nil)
		},
		"openai stream": func(t *testing.T, url string) Provider {
			return newTestAdapter(t, url, func(c *OpenAIConfig) { c.Stream = true })
		},
		"anthropic stream": func(t *testing.T, url string) Provider {
			return newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = true })
		},
	}
	for name, adapter := range adapters {
		t.Run(name+"/300 with a completion body", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusMultipleChoices)
				fmt.Fprint(w, completionBody)
			})
			resp, err := adapter(t, srv.URL).Complete(context.Background(), testRequest())
			if err == nil {
				t.Fatalf("an HTTP 300 was accepted as the answer: %q", resp.Content)
			}
			if e := mustError(t, err); e.Kind != KindMisconfigured || e.StatusCode != 300 || e.Received {
				t.Fatalf("%s status %d received=%v (%s), want misconfigured status 300, not received", e.Kind, e.StatusCode, e.Received, e.Message)
			}
		})
		for _, st := range []int{300, 304, 307} {
			t.Run(fmt.Sprintf("%s/%d empty, no Location", name, st), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(st) })
				_, err := adapter(t, srv.URL).Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind == KindConnReset || e.Action == ActionRetry || e.Fault == FaultNetwork {
					t.Fatalf("HTTP %d: %s/%s/%s (%s), want the status classified, not a reset before any response", st, e.Kind, e.Fault, e.Action, e.Message)
				}
				if e.Kind != KindMisconfigured || e.StatusCode != st || e.Received {
					t.Fatalf("HTTP %d: %s status %d received=%v (%s), want misconfigured status %d, not received", st, e.Kind, e.StatusCode, e.Received, e.Message, st)
				}
			})
		}
	}
}
