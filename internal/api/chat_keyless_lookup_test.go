package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// tooLongChat is a chat request too long for the 50-token window of
// setup(options{window: 50}): no target is eligible, so it is refused before
// any job (400 context_length_exceeded), as a route whose breakers are all
// open refuses every call (503 no_eligible_provider).
var tooLongChat = `{"model":"default","messages":[{"role":"user","content":"` + strings.Repeat("word ", 400) + `"}]}`

// A chat call without an Idempotency-Key (what OpenAI's SDKs send) has a key
// made up for it ("auto-<uuid v7>") that no other request can hold, so a
// refusal before any job (too long for every window, or no eligible provider
// during an outage) looks it up neither before planning (heldBeforePlan) nor
// after (planJob's AwaitKeyHeld, a write transaction on a pool connection
// under one of the store's alone turns): no statement touches
// idempotency_keys.
func TestChatKeylessRefusalLooksUpNoKey(t *testing.T) {
	sts := &statements{}
	b := setup(t, options{window: 50, tracer: sts})
	n := sts.count()
	r := b.do(t, http.MethodPost, chatPath, acmeKey, tooLongChat)
	_, code, _, _ := openAIErr(r)
	if r.status != http.StatusBadRequest || code != "context_length_exceeded" {
		t.Fatalf("keyless too-long call: %d %s; want 400 context_length_exceeded", r.status, r.raw)
	}
	var lookUps []string
	for _, q := range sts.since(n) {
		if strings.Contains(q, "idempotency_keys") {
			lookUps = append(lookUps, q[:min(len(q), 200)])
		}
	}
	if len(lookUps) > 0 {
		t.Fatalf("a keyless chat call refused before any job looked up the key made up for it (%d round trips):\n%s",
			len(lookUps), strings.Join(lookUps, "\n"))
	}
}
