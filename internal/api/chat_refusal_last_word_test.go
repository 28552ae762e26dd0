package api_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A refusal of the request by content policy or as too long is the caller's
// 400 only when it was the race's last word. When a hedge refuses while the
// primary, which took the request, is in flight, and the primary then fails
// for its own reasons (a 503), the caller hears 502 — as for a plain bad
// request (TestChatBadRequestOvertakenByAnotherFailureIsNotTheCallers).
func TestChatRefusalOvertakenByAnotherFailureIsNotTheCallers(t *testing.T) {
	for _, c := range []struct {
		kind providers.Kind
		code string
	}{
		{providers.KindContextLength, "context_length_exceeded"},
		{providers.KindContentPolicy, "content_policy_violation"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			refusal := func(int, *providers.Request) providers.Step {
				return providers.Step{Error: &providers.Error{Kind: c.kind, StatusCode: 400, Message: "refused by this model"}}
			}
			refused := &signalOnStatement{marker: []byte(`"kind":"` + string(c.kind) + `"`), done: make(chan struct{})}
			hedged, hedgedOnce := make(chan struct{}), sync.Once{}
			b := setup(t, options{
				tracer:     refused,
				hedgeAfter: time.Millisecond,
				window:     200000, // the primary takes what the fallback finds too long
				respond: func(int, *providers.Request) providers.Step {
					<-hedged       // still in flight when the hedge starts
					<-refused.done // the hedge's refusal is recorded first
					return providers.Step{Status: 503}
				},
				fallback: func(call int, req *providers.Request) providers.Step {
					hedgedOnce.Do(func() { close(hedged) })
					return refusal(call, req)
				},
			})
			r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
			typ, code, _, _ := openAIErr(r)
			if r.status != http.StatusBadGateway || typ != "server_error" || code != "upstream_failed" {
				t.Fatalf("status %d body %s", r.status, r.raw)
			}

			// The refusal as the last word is still the caller's 400.
			alone := setup(t, options{respond: refusal})
			r = alone.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
			typ, code, _, _ = openAIErr(r)
			if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != c.code {
				t.Fatalf("alone: status %d body %s", r.status, r.raw)
			}
		})
	}
}
