package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// docs/api.md (resolutions): for a chat job "the completion made from it
// carries the router's estimate as its usage (the prompt and the result
// counted with the target's tokenizer, marked "estimated": true)". An
// attempt that became unknown because its router died (lease expiry,
// store.expireJobAttempts) has no usage at all — the live run that would
// have stored the prompt's estimate is gone (docs/api.md: "except one
// recovery marked unknown after its router died, which has none").
// resolvedUsage starts from the attempt's stored usage and only adds the
// result's tokens, so such a resolution's completion says prompt_tokens 0,
// and the won attempt's cost_usd prices the answer alone. The test stands in
// for the dead router by clearing the usage the live run stored, which is
// what the attempt row holds after a lease expiry.
func TestResolvedExpiredAttemptCountsThePrompt(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"Write a short greeting for a customer who just signed up for the premium plan."}]}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolved-expired-usage")
	if r.status != http.StatusGatewayTimeout {
		t.Fatalf("status %d: %s; want 504 outcome_unknown", r.status, r.raw)
	}
	id := r.header.Get("X-Router-Job-Id")
	// As store.expireJobAttempts leaves an attempt whose router died: unknown, no usage.
	tag, err := b.db.Pool.Exec(context.Background(), `UPDATE attempts SET usage = NULL WHERE job_id = $1 AND state = 'unknown'`, id)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("clear usage: %v (%d rows)", err, tag.RowsAffected())
	}
	res := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey,
		`{"outcome":"succeeded","result":"Welcome aboard! We are glad to have you with us."}`)
	if res.status != http.StatusOK {
		t.Fatalf("resolve: status %d: %s", res.status, res.raw)
	}
	rep := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolved-expired-usage")
	if rep.status != http.StatusOK {
		t.Fatalf("replay: status %d: %s", rep.status, rep.raw)
	}
	u, _ := rep.body["usage"].(map[string]any)
	if prompt, _ := u["prompt_tokens"].(float64); prompt == 0 {
		t.Errorf("resolved completion's usage = %v: prompt_tokens 0 — the prompt the provider billed is not counted "+
			"(docs/api.md: the prompt and the result counted with the target's tokenizer)", u)
	}
	job := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	atts, _ := job.body["attempts"].([]any)
	if len(atts) == 0 {
		t.Fatalf("no attempts: %s", job.raw)
	}
	au, _ := atts[0].(map[string]any)["usage"].(map[string]any)
	if prompt, _ := au["prompt_tokens"].(float64); prompt == 0 {
		t.Errorf("won attempt's usage = %v: no prompt tokens, so its cost_usd prices the answer alone", au)
	}
}
