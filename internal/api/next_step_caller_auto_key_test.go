package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// On POST /v1/jobs the Idempotency-Key is always the caller's, even one that
// looks like the "auto-<uuid>" the router makes up for a chat call sent
// without a key: a failed job's next_step tells of the key (a resend with it
// replays the failed job), not to "send the request again as a new job".
// Found by review.
func TestNextStepCallerKeyLooksAuto(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: `{"category":"nope"}`}
	}})
	key := "auto-0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e8f"
	r := b.create(t, acmeKey, key, triageBody("x"), "Prefer", "wait=10")
	if r.status != http.StatusCreated || r.body["state"] != "failed" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	step, _ := r.body["next_step"].(string)
	if !strings.Contains(step, "Idempotency-Key") {
		t.Errorf("next_step of a job created with Idempotency-Key %q does not mention the key: %q", key, step)
	}
}
