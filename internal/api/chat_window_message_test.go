package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat request too long for every target of its route is answered 400
// context_length_exceeded before anything is stored (docs/chat.md). The
// message quoted only the route's first target, so on a route whose targets
// have different windows the caller was told the primary's window — here 50
// tokens — and not the fallback's 128000, the bound that actually decides
// whether a shortened request can run. POST /v1/jobs' input-too-long names every target's count
// and window (docs/api.md: "the detail names each target's token count and
// window"); the chat answer should too.
func TestChatTooLongNamesEveryTargetWindow(t *testing.T) {
	ok := func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }
	b := setup(t, options{window: 50, respond: ok, fallback: ok})
	var sb strings.Builder
	for i := 0; i < 90000; i++ {
		fmt.Fprintf(&sb, "word%d ", i)
	}
	body, _ := json.Marshal(map[string]any{"model": "default",
		"messages": []map[string]string{{"role": "user", "content": sb.String()}}})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, string(body))
	_, code, param, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || code != "context_length_exceeded" || param != "messages" {
		t.Fatalf("status %d code %q param %q: %s; want 400 context_length_exceeded on messages", r.status, code, param, msg)
	}
	if !strings.Contains(msg, "fallback") || !strings.Contains(msg, "128000") {
		t.Fatalf("message %q names only the primary's window (50); want every target's, the fallback's 128000 included", msg)
	}
}
