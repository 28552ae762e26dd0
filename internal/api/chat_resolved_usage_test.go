package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// docs/chat.md: "When the provider reported no usage (...), `usage` is the
// router's count of the prompt and the answer with its target's tokenizer,
// marked "estimated": true (...), rather than zeros". A chat job whose unknown
// attempt an operator resolves as succeeded (docs/api.md: "For a chat job,
// result is the assistant's content") reports no provider usage either: the
// completion the caller gets (and every replay of it) said 0 prompt, 0
// completion and 0 total tokens, unmarked, while the won attempt itself
// carried the router's estimate of its prompt. An SDK that meters by usage
// saw a free call.
func TestResolvedChatCompletionUsageIsNotZeros(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"Write a short greeting for a customer who just signed up."}]}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolved-usage")
	_, code, _, _ := openAIErr(r)
	if r.status != http.StatusGatewayTimeout || code != "outcome_unknown" {
		t.Fatalf("status %d code %q; want 504 outcome_unknown", r.status, code)
	}
	id := r.header.Get("X-Router-Job-Id")
	res := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey,
		`{"outcome":"succeeded","result":"Welcome aboard! We are glad to have you with us."}`)
	if res.status != http.StatusOK {
		t.Fatalf("resolve: status %d: %s", res.status, res.raw)
	}
	// The won attempt carries the router's estimate of its prompt.
	job := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	atts, _ := job.body["attempts"].([]any)
	if len(atts) == 0 {
		t.Fatalf("job has no attempts: %s", job.raw)
	}
	au, _ := atts[0].(map[string]any)["usage"].(map[string]any)
	t.Logf("won attempt's usage: %v", au)

	rep := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolved-usage")
	if rep.status != http.StatusOK {
		t.Fatalf("replay: status %d: %s", rep.status, rep.raw)
	}
	u, _ := rep.body["usage"].(map[string]any)
	prompt, _ := u["prompt_tokens"].(float64)
	completion, _ := u["completion_tokens"].(float64)
	total, _ := u["total_tokens"].(float64)
	if prompt == 0 || completion == 0 || total == 0 || u["estimated"] != true {
		t.Fatalf("resolved completion's usage = %v; want the router's estimate of the prompt and the answer, "+
			"marked \"estimated\": true, not zeros (docs/chat.md)", u)
	}
}
