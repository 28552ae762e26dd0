package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// The chat 503 no_eligible_provider says in words why each provider was
// refused and what to do, not the routing decisions' raw JSON. Found by
// review.
func TestChatNoEligibleProviderSaysWhyInWords(t *testing.T) {
	set := openPrimaryBreaker(t, 45*time.Second)
	b := setup(t, options{admission: set})
	for _, tc := range []struct {
		name    string
		headers []string
		want    string
	}{
		{"with a key", []string{"Idempotency-Key", "chat-no-eligible-1"}, "retry after Retry-After with the same Idempotency-Key"},
		{"without a key", nil, "send the request again after Retry-After"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`, tc.headers...)
			e, _ := r.body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if r.status != http.StatusServiceUnavailable || e["code"] != "no_eligible_provider" {
				t.Fatalf("%d %s, want 503 no_eligible_provider", r.status, r.raw)
			}
			if strings.Contains(msg, `"eligible":false`) || strings.Contains(msg, "[{") {
				t.Fatalf("message %q pastes the routing JSON", msg)
			}
			if !strings.Contains(msg, "primary: circuit breaker open") || !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want the primary's reason in words and %q", msg, tc.want)
			}
		})
	}
}

// The tenant listener answers the operator endpoints 404, as before, but says
// where they are served instead of that they do not exist. Found by review.
func TestOperatorPathsOnTenantListenerNameOpsListen(t *testing.T) {
	b := setup(t, options{})
	for _, path := range []string{"/v1/providers", "/v1/conformance", "/metrics", "/dashboard"} {
		r := b.do(t, http.MethodGet, path, acmeKey, "")
		detail, _ := r.body["detail"].(string)
		if r.status != http.StatusNotFound || !strings.Contains(detail, "operator listener") ||
			!strings.Contains(detail, "ops_listen") || !strings.Contains(detail, "127.0.0.1:9090") ||
			!strings.Contains(detail, "docs/operations.md") {
			t.Errorf("GET %s: %d %s, want 404 naming ops_listen and docs/operations.md", path, r.status, r.raw)
		}
	}
	// Any other path is still just not an endpoint.
	if r := b.do(t, http.MethodGet, "/v1/nope", acmeKey, ""); r.status != http.StatusNotFound ||
		!strings.Contains(string(r.raw), "is not an endpoint of this router") {
		t.Errorf("GET /v1/nope: %d %s", r.status, r.raw)
	}
}

// A retry of a job that has not failed says once that only a failed job can
// be retried (the store's error says it; the API used to add it again).
// Found by review.
func TestRetryOfLiveJobSaysOnlyFailedOnce(t *testing.T) {
	b := setup(t, options{})
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, err := store.Fingerprint("triage", "", "", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.db.Store.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "triage",
		IdempotencyKey: "retry-live-1", Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	r := b.do(t, http.MethodPost, "/v1/jobs/"+job.ID+"/retry", acmeKey, "")
	detail, _ := r.body["detail"].(string)
	if typ, _ := r.body["type"].(string); r.status != http.StatusConflict || !strings.HasSuffix(typ, "not-retryable") {
		t.Fatalf("%d %s, want 409 not-retryable", r.status, r.raw)
	}
	if n := strings.Count(detail, "only a failed job can be retried"); n != 1 {
		t.Fatalf("detail %q says %d times that only a failed job can be retried, want once", detail, n)
	}
}
