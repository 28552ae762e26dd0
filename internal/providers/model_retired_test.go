package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A model the provider retired (Groq's model_decommissioned), a deployment
// that cannot do chat completions (Azure's OperationNotSupported: an
// embeddings model) and an account the provider restricted (Groq's
// organization_restricted), all answered with HTTP 400 (or as an error
// event in a stream), were bad_request: the caller's fault, the job stopped.
// They are the router's configuration of the target: model_not_found and
// auth, failed over. Found by review.
func TestRetiredOrWrongKindModelIsNotTheCallers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Kind
	}{
		{"groq model_decommissioned", apiErrorBody("The model `mixtral-8x7b-32768` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.", "invalid_request_error", nil, "model_decommissioned"), KindModelNotFound},
		{"azure OperationNotSupported", `{"error":{"code":"OperationNotSupported","message":"The chatCompletion operation does not work with the specified model, text-embedding-ada-002. Please choose different model and try again."}}`, KindModelNotFound},
		{"groq organization_restricted", `{"error":{"message":"Organization has been restricted. Please reach out to support if you believe this was in error.","type":"invalid_request_error","param":"","code":"organization_restricted"}}`, KindAuth},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 400, nil, tc.body) })
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Fault == FaultCaller || e.Action == ActionStop {
					t.Errorf("got %s/%s/%s (%q): the target's model or account is the router's configuration; the job must fail over, not stop blaming the caller", e.Kind, e.Fault, e.Action, e.Message)
				}
				if e.Kind != tc.want || e.Action != ActionFailover {
					t.Errorf("got %s/%s, want %s/failover", e.Kind, e.Action, tc.want)
				}
			})
		}
		t.Run(tc.name+"/error event", func(t *testing.T) {
			// The same error as an error event of a 200 stream.
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", tc.body)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
			_, err := p.Complete(context.Background(), testRequest())
			if e := mustError(t, err); e.Kind != tc.want || e.Action != ActionFailover {
				t.Errorf("got %s/%s (%q), want %s/failover", e.Kind, e.Action, e.Message, tc.want)
			}
		})
	}
}
