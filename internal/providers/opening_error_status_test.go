package providers

import (
	"context"
	"net/http"
	"testing"
)

// An error object that opens a 200 answer — before any chunk of it, in a
// stream or as the whole body — and names a 4xx status as its code
// (OpenRouter's {"error": {"code": 400, "message": …}}, LiteLLM's "code":
// "400"; the HTTP status already sent as 200 behind a gateway's keep-alive
// comments or whitespace) is the provider refusing the request as that HTTP
// status would: a 400 is never retried on the same model (SPEC §6.2), a 401
// is the router's credentials, a 404 the target's model. All of them were
// server_error: the provider's fault (counted against its breaker) and
// retried on the same target, because streamedStatus keeps only 402, 408,
// 429 and 5xx and typeKind's fallback is server_error.
func TestOpeningErrorObject4xxIsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  string
		want Kind
	}{
		{"400", `{"error":{"code":400,"message":"Provider returned error","metadata":{"provider_name":"Fireworks"}}}`, KindBadRequest},
		{"400 litellm", `{"error":{"message":"litellm.BadRequestError: OpenAIException - Unsupported value: 'temperature' does not support 0.2 with this model.","type":"None","param":"None","code":"400"}}`, KindBadRequest},
		{"401", `{"error":{"code":401,"message":"No auth credentials found"}}`, KindAuth},
		{"404", `{"error":{"code":404,"message":"No endpoints found for acme/model."}}`, KindModelNotFound},
	} {
		for _, streamed := range []bool{true, false} {
			name := tc.name + " unstreamed"
			if streamed {
				name = tc.name + " streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					if streamed {
						startStream(w)
						_, _ = w.Write([]byte(": OPENROUTER PROCESSING\n\n"))
						sse(w, tc.obj)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write([]byte("\n\n" + tc.obj))
				})
				p := newTestAdapter(t, srv.URL, nil)
				var err error
				if streamed {
					_, err = p.CompleteStream(context.Background(), testRequest(), nil)
				} else {
					_, err = p.Complete(context.Background(), testRequest())
				}
				e, ok := AsError(err)
				if !ok {
					t.Fatalf("error %v is no *Error", err)
				}
				if e.Kind != tc.want || e.Action == ActionRetry {
					t.Fatalf("code %s opening the answer: kind %s fault %s action %s, want kind %s, not retried", tc.name, e.Kind, e.Fault, e.Action, tc.want)
				}
			})
		}
	}
}
