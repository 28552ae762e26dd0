package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A chat request too long for the context window of every model of its route
// is answered as OpenAI answers it — 400 context_length_exceeded on messages,
// which clients act on by trimming the history — not 503, which OpenAI's SDKs
// would resend unchanged. Nothing is stored and no provider is called.
func TestChatTooLongForEveryWindow(t *testing.T) {
	b := setup(t, options{window: 50})
	body := `{"model":"default","messages":[{"role":"user","content":"` + strings.Repeat("word ", 200) + `"}]}`
	r := b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "too-long")
	e, _ := r.body["error"].(map[string]any)
	if r.status != http.StatusBadRequest || e["code"] != "context_length_exceeded" || e["param"] != "messages" ||
		e["type"] != "invalid_request_error" || !strings.Contains(e["message"].(string), "context window too small") {
		t.Fatalf("too long for every window: %d %s", r.status, r.raw)
	}
	if n := b.count(t, "SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM idempotency_keys)"); n != 0 {
		t.Fatalf("stored %d rows", n)
	}
	if b.primary.Calls() != 0 {
		t.Fatal("provider called")
	}
}

// A limit alone too large for every window is blamed on the field the caller
// sent: max_completion_tokens when that is it (it wins over max_tokens), so
// an SDK user is pointed at the parameter they set. Found by review.
func TestChatTooLongNamesTheLimitTheCallerSent(t *testing.T) {
	b := setup(t, options{window: 50})
	for _, c := range []struct{ field, want string }{
		{`"max_completion_tokens":100`, "max_completion_tokens"},
		{`"max_tokens":100`, "max_tokens"},
		{`"max_tokens":10,"max_completion_tokens":100`, "max_completion_tokens"},
	} {
		body := `{"model":"default",` + c.field + `,"messages":[{"role":"user","content":"hi"}]}`
		r := b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, body)
		e, _ := r.body["error"].(map[string]any)
		if r.status != http.StatusBadRequest || e["code"] != "context_length_exceeded" || e["param"] != c.want ||
			!strings.Contains(e["message"].(string), "lower "+c.want+".") {
			t.Errorf("%s: %d %s; want param %s", c.field, r.status, r.raw, c.want)
		}
	}
}
