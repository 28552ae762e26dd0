package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// OpenAI's SDKs resend 408, 409, 429 and 5xx answers on their own (twice by
// default) and send no Idempotency-Key, so a resend of a call without a key
// is a second job — the provider possibly paid twice. Every answer to such a
// call once a job may exist carries x-should-retry: false, which the SDKs
// obey; so does an answer a resend with the same key could not change (a
// 409, an unknown or failed job). A still-running job answered to a caller
// with a key may be resent (it attaches to the job), and a refusal before
// anything is stored (a 429) is safe to resend.
func TestChatTellsSDKsWhenNotToResend(t *testing.T) {
	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	hang := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	for _, c := range []struct {
		name string
		hdr  []string
	}{
		{"no key, unknown outcome", nil},
		{"own key, unknown outcome", []string{"Idempotency-Key", "sdk-retry-1"}},
	} {
		r := hang.do(t, http.MethodPost, chatPath, acmeKey, body, c.hdr...)
		if r.status != http.StatusGatewayTimeout || r.header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: status %d, x-should-retry %q; want 504 with x-should-retry: false", c.name, r.status, r.header.Get("X-Should-Retry"))
		}
	}
	r := hang.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"other"}]}`, "Idempotency-Key", "sdk-retry-1")
	if r.status != http.StatusConflict || r.header.Get("X-Should-Retry") != "false" {
		t.Errorf("key reused: status %d, x-should-retry %q; want 409 with x-should-retry: false", r.status, r.header.Get("X-Should-Retry"))
	}

	failed := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }})
	r = failed.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "sdk-retry-2")
	if r.status != http.StatusBadGateway || r.header.Get("X-Should-Retry") != "false" {
		t.Errorf("failed job: status %d, x-should-retry %q; want 502 with x-should-retry: false", r.status, r.header.Get("X-Should-Retry"))
	}
	ok := setup(t, options{})
	r = ok.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "sdk-retry-3")
	if r.status != http.StatusOK || r.header.Get("X-Should-Retry") != "" {
		t.Errorf("own key, success: status %d, x-should-retry %q; want none", r.status, r.header.Get("X-Should-Retry"))
	}
}
