package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// SPEC §4 ("All bodies are JSON"), §17 ("Input that is not valid UTF-8 is a
// 400") and docs/api.md ("Unknown body fields are rejected (400) so that a
// typo is not silently ignored"): POST /v1/jobs/{id}/retry and
// POST /v1/jobs/{id}/cancel never read their body, so a body that is not
// JSON, not UTF-8, or that asks for something the endpoint does not do
// (a different route on retry) is silently ignored and the action is taken.
func TestActionsTakeNoBody(t *testing.T) {
	b := setup(t, options{respond: func(call int, req *providers.Request) providers.Step {
		if strings.Contains(fmt.Sprint(req.Messages), "hangme") {
			return providers.Step{Hang: true} // the job stays running
		}
		return providers.Step{Output: `{"category":"nope"}`} // invalid: the job fails
	}})
	r := b.create(t, acmeKey, "body-ignored", triageBody("x"), "Prefer", "wait=10")
	if r.body["state"] != "failed" {
		t.Fatalf("setup: job is %v, want failed", r.body["state"])
	}
	id := r.job()
	retry := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "{\"route\":\"fallback\xff\"")
	if retry.status != http.StatusBadRequest {
		t.Errorf("retry with a body that is neither JSON nor UTF-8 (asking for another route): status %d, want 400; "+
			"the retry was made anyway (state %v)", retry.status, retry.body["state"])
	}
	r2 := b.create(t, acmeKey, "body-ignored-2", triageBody("hangme"))
	cancel := b.do(t, "POST", "/v1/jobs/"+r2.job()+"/cancel", acmeKey, `{"reason": "duplicate order", "dry_run": true}`)
	if cancel.status != http.StatusBadRequest {
		t.Errorf("cancel with unknown body fields (dry_run): status %d, want 400; the job was cancelled anyway (state %v)",
			cancel.status, cancel.body["state"])
	}
}

// An action without options goes ahead with no body, white space, or {}; and
// the refusal of a body says what to do and names the job.
func TestActionsAcceptEmptyBodies(t *testing.T) {
	b := setup(t, options{respond: func(call int, req *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	for i, body := range []string{"", " \n", "{}", "{ }"} {
		r := b.create(t, acmeKey, fmt.Sprintf("empty-body-%d", i), triageBody("x"))
		c := b.do(t, "POST", "/v1/jobs/"+r.job()+"/cancel", acmeKey, body)
		if c.status != http.StatusOK || c.body["state"] != "cancelled" {
			t.Errorf("cancel with body %q: status %d, state %v; want 200 cancelled", body, c.status, c.body["state"])
		}
	}
	r := b.create(t, acmeKey, "refused-body", triageBody("x"))
	c := b.do(t, "POST", "/v1/jobs/"+r.job()+"/cancel", acmeKey, `{"dry_run":true}`)
	if d, _ := c.body["detail"].(string); c.status != http.StatusBadRequest || !strings.Contains(d, "takes no body") || c.body["job_id"] != r.job() {
		t.Errorf("cancel with a body: status %d, body %v; want 400 saying the action takes no body, naming the job", c.status, c.body)
	}
	if g := b.do(t, "GET", "/v1/jobs/"+r.job(), acmeKey, ""); g.body["state"] == "cancelled" {
		t.Errorf("a refused cancel cancelled the job")
	}
}
