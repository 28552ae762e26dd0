package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// Anthropic's OpenAI-compatible endpoint refuses a disabled organization as
// its Messages API does, with 400 invalid_request_error: the router's
// account, not the caller's request — fail over, count against the breaker.
func TestOpenAICompatibleDisabledOrganizationIsTheRoutersAccount(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"This organization has been disabled."}}`)
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindAuth || e.Fault == FaultCaller || e.Action == ActionStop {
		t.Fatalf("%s/%s/%s: want auth, the router's account, failed over", e.Kind, e.Fault, e.Action)
	}
}
