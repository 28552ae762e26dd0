package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A keyed chat call whose job failed because the provider refused the prompt
// as too long (context_length_exceeded) or by content policy is answered 400
// with a message that says the Idempotency-Key stays bound to the failed job
// and to resend the corrected request with a new key: the same code before
// anything is stored leaves the key free, and nothing else in the answer
// tells the two apart. The corrected request under the same key is a 409.
func TestChatProviderRefusalSaysKeyIsBound(t *testing.T) {
	for _, c := range []struct {
		kind providers.Kind
		code string
	}{
		{providers.KindContextLength, "context_length_exceeded"},
		{providers.KindContentPolicy, "content_policy_violation"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Error: &providers.Error{Kind: c.kind, StatusCode: 400, Message: "refused by this model"}}
			}})
			key := "refusal-" + string(c.kind)
			long := `{"model":"default","messages":[{"role":"user","content":"` + strings.Repeat("long history ", 50) + `"}]}`
			r := b.do(t, http.MethodPost, chatPath, acmeKey, long, "Idempotency-Key", key)
			_, code, _, msg := openAIErr(r)
			if r.status != http.StatusBadRequest || code != c.code {
				t.Fatalf("first call: %d %s; want 400 %s", r.status, r.raw, c.code)
			}
			short := `{"model":"default","messages":[{"role":"user","content":"short"}]}`
			again := b.do(t, http.MethodPost, chatPath, acmeKey, short, "Idempotency-Key", key)
			_, code2, _, _ := openAIErr(again)
			t.Logf("corrected request resent with the same key: %d %s", again.status, code2)
			if !strings.Contains(msg, "new Idempotency-Key") || !strings.Contains(msg, "stays bound") {
				t.Fatalf("the 400 %s of a keyed call whose job failed does not say that its key stays bound to the failed job "+
					"(the corrected request under the same key is %d %s): %q", c.code, again.status, code2, msg)
			}
		})
	}
}
