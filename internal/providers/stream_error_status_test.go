package providers

import (
	"context"
	"net/http"
	"testing"
)

// An error inside a stream that names an HTTP status as its code
// (OpenRouter: {"error": {"code": 429, ...}}) is classified by that status
// when it says what to do next: a rate limit is retried, an exhausted quota is
// the operator's account. It was server_error whatever the code.
func TestStreamErrorWithAStatusCodeIsThatStatus(t *testing.T) {
	for _, tc := range []struct {
		code string
		kind Kind
	}{
		{`429`, KindRateLimited},
		{`402`, KindQuotaExceeded},
		{`503`, KindUnavailable},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w,
				`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half"},"finish_reason":null}]}`,
				`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","error":{"code":`+tc.code+`,"message":"upstream said no"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
				"[DONE]")
		})
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatalf("code %s: came back as an answer", tc.code)
		}
		e, ok := AsError(err)
		if !ok || e.Kind != tc.kind {
			t.Fatalf("code %s: %v, want kind %s", tc.code, err, tc.kind)
		}
	}
}
