package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// docs/api.md (cancel, retry): "any other body is refused (400, "takes no
// body") and nothing is done, so an option the action does not have (a route
// for the retry, a dry run for the cancel) is never silently ignored"; GET
// /v1/jobs refuses a query parameter it does not read. The same option sent
// as a query parameter — POST /v1/jobs/{id}/cancel?dry_run=true, as
// Kubernetes-style APIs take it; …/retry?route=fallback — is silently
// ignored and the action is taken: the "dry run" cancels the job for good,
// the retry runs on the job's own route.
func TestActionsRefuseQueryOptions(t *testing.T) {
	b := setup(t, options{respond: func(call int, req *providers.Request) providers.Step {
		if strings.Contains(fmt.Sprint(req.Messages), "hangme") {
			return providers.Step{Hang: true} // the job stays running
		}
		return providers.Step{Output: `{"category":"nope"}`} // invalid: the job fails
	}})
	running := b.create(t, acmeKey, "query-dry-run", triageBody("hangme"))
	cancel := b.do(t, "POST", "/v1/jobs/"+running.job()+"/cancel?dry_run=true", acmeKey, "")
	after := b.do(t, "GET", "/v1/jobs/"+running.job(), acmeKey, "")
	if cancel.status != http.StatusBadRequest || after.body["state"] == "cancelled" {
		t.Errorf("cancel?dry_run=true: status %d, the job is now %v; want 400 naming the parameter, the job left running",
			cancel.status, after.body["state"])
	}
	failed := b.create(t, acmeKey, "query-route", triageBody("x"), "Prefer", "wait=10")
	if failed.body["state"] != "failed" {
		t.Fatalf("setup: job is %v, want failed", failed.body["state"])
	}
	retry := b.do(t, "POST", "/v1/jobs/"+failed.job()+"/retry?route=fallback", acmeKey, "")
	if retry.status != http.StatusBadRequest {
		t.Errorf("retry?route=fallback: status %d (state %v); want 400 naming the parameter, nothing done",
			retry.status, retry.body["state"])
	}
	if d, _ := cancel.body["detail"].(string); !strings.Contains(d, `"dry_run"`) || cancel.body["job_id"] != running.job() {
		t.Errorf("cancel?dry_run=true's refusal should name the parameter and the job: %s", cancel.raw)
	}
	// Another owner's job is still the 404, whatever the query.
	if other := b.do(t, "POST", "/v1/jobs/"+running.job()+"/cancel?dry_run=true", globexKey, ""); other.status != http.StatusNotFound {
		t.Errorf("another owner's cancel?dry_run=true: %d, want 404: %s", other.status, other.raw)
	}
	jobs := b.count(t, `SELECT count(*) FROM jobs`)
	create := b.do(t, "POST", "/v1/jobs?dry_run=1", acmeKey, triageBody("dry"), "Idempotency-Key", "query-create")
	if d, _ := create.body["detail"].(string); create.status != http.StatusBadRequest || !strings.Contains(d, `"dry_run"`) {
		t.Errorf("POST /v1/jobs?dry_run=1: %d %s; want 400 naming the parameter", create.status, create.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != jobs {
		t.Errorf("POST /v1/jobs?dry_run=1 made a job (%d jobs, were %d)", n, jobs)
	}
	resolve := b.do(t, "POST", "/v1/jobs/"+failed.job()+"/attempts/1/resolve?outcome=failed", acmeKey, `{"outcome":"failed"}`)
	if d, _ := resolve.body["detail"].(string); resolve.status != http.StatusBadRequest || !strings.Contains(d, `"outcome"`) {
		t.Errorf("resolve?outcome=failed: %d %s; want 400 naming the parameter", resolve.status, resolve.raw)
	}
}
