package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A chat completion for a model the router does not serve is answered 404
// model_not_found quoting the model. The model is the caller's, as long as
// the body (up to http.max_body_bytes): quoted whole, a 900 KB name made a
// 900 KB answer. It is quoted clipped, and the answer stays small and still
// says which model and how to find the ones served. Found by review.
func TestChatUnknownModelQuotedClipped(t *testing.T) {
	b := setup(t, options{})
	model := "gpt-" + strings.Repeat("x", 900<<10)
	body, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": "hi"}}})
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey, string(body))
	if r.status != 404 {
		t.Fatalf("unknown model: %d %.300s", r.status, r.raw)
	}
	if len(r.raw) > 1024 {
		t.Fatalf("the 404 for a %d-byte model name is %d bytes: %.300s…", len(model), len(r.raw), r.raw)
	}
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["code"] != "model_not_found" || e["param"] != "model" || !strings.Contains(msg, `"gpt-xxxx`) ||
		!strings.Contains(msg, "…") || !strings.Contains(msg, "GET /v1/models") {
		t.Fatalf("the 404 does not say which model and how to find the ones served: %s", r.raw)
	}
}
