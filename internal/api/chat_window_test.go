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
