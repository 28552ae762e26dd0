package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

func TestBillingNotActiveIsQuota(t *testing.T) {
	for _, code := range []any{"billing_not_active", nil} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("code=%v/stream=%v", code, stream), func(t *testing.T) {
				body := apiErrorBody("Your account is not active, please check your billing details on our website.", "billing_not_active", nil, code)
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 429, nil, body) })
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindQuotaExceeded || e.Action == ActionRetry {
					t.Errorf("got %s/%s (%q), want quota_exceeded/failover", e.Kind, e.Action, e.Message)
				}
			})
		}
	}
}

// The same error as an error event of a 200 stream (type
// billing_not_active, no status) is quota_exceeded too.
func TestBillingNotActiveInStreamIsQuota(t *testing.T) {
	body := apiErrorBody("Your account is not active, please check your billing details on our website.", "billing_not_active", nil, nil)
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", body)
	})
	_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindQuotaExceeded || e.Action != ActionFailover {
		t.Errorf("got %s/%s (%q), want quota_exceeded/failover", e.Kind, e.Action, e.Message)
	}
}
