package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// POST /v1/jobs/{id}/retry of a job that no longer fits any target's context
// window (a window made smaller since, or a default max_tokens now counted)
// is refused as before, but its detail used to blame "breakers open,
// conformance missing or stale" whatever the routing said. It names the
// routing decisions' reasons, and does not promise that waiting helps.
// Found by review.
func TestRetryRefusalSaysWhyNoProviderIsEligible(t *testing.T) {
	b := setup(t, options{window: 350})
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in after the password reset; the link in the mail has expired."}`)
	fp, err := store.Fingerprint("triage", "", "", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "retry-too-long",
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if state, err := b.db.Store.SettleJob(ctx, job.ID, "it failed before the window shrank"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v; want failed", state, err)
	}
	r := b.do(t, "POST", "/v1/jobs/"+job.ID+"/retry", acmeKey, "")
	detail, _ := r.body["detail"].(string)
	// 422 as POST /v1/jobs answers such an input: a 503 is retried by
	// clients and SDKs on their own, and this never clears by waiting.
	if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(fmt.Sprint(r.body["type"]), "/input-too-long") || r.body["job_id"] != job.ID ||
		!strings.Contains(detail, "still failed") || r.header.Get("Retry-After") != "" {
		t.Fatalf("retry of a job too long for every target: %d %s (Retry-After %q); want 422 input-too-long naming the job, the job still failed, no Retry-After",
			r.status, r.raw, r.header.Get("Retry-After"))
	}
	if strings.Contains(detail, "breakers open") || !strings.Contains(detail, "primary: context window") ||
		!strings.Contains(detail, "cannot help") {
		t.Fatalf("detail %q; want the routing's reason (the context window), not breakers or conformance, and no promise that a retry helps", detail)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed'`, job.ID); n != 1 {
		t.Fatal("a refused retry changed the job")
	}
}
