package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// docs/api.md (retry): "If the job's key expired and a newer job has since
// claimed it, the retry is refused (409, idempotency-key-rebound)". A failed
// job's resource carries next_step, advice on what to do now. Once the job's
// key has been taken over by a newer job, that advice is wrong on both
// counts: it says to "start a new round with POST /v1/jobs/{id}/retry" (which
// is the 409 above) and to "resend with the same Idempotency-Key to attach to
// it" (the key now holds another request's job: 409 idempotency-key-reused).
func TestNextStepAfterKeyTakenOver(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: `{"category":"nope"}`} // breaks the schema: the job fails
	}})
	a := b.create(t, acmeKey, "ns-taken", triageBody("A"), "Prefer", "wait=10")
	if a.body["state"] != "failed" {
		t.Fatalf("setup: job A is %v, want failed (%s)", a.body["state"], a.raw)
	}
	if _, err := b.db.Pool.Exec(context.Background(),
		`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, a.job()); err != nil {
		t.Fatal(err)
	}
	n := b.create(t, acmeKey, "ns-taken", triageBody("B"), "Prefer", "wait=10") // a different request takes the key over
	if n.status != http.StatusCreated || n.job() == a.job() {
		t.Fatalf("setup: request B under the expired key: %d %s", n.status, n.raw)
	}
	got := b.do(t, "GET", "/v1/jobs/"+a.job(), acmeKey, "")
	step, _ := got.body["next_step"].(string)
	retry := b.do(t, "POST", "/v1/jobs/"+a.job()+"/retry", acmeKey, "")
	if retry.status != http.StatusConflict {
		t.Fatalf("setup: retry of A after its key was taken over: %d %s, want the documented 409", retry.status, retry.raw)
	}
	if strings.Contains(step, "/retry") || strings.Contains(step, "same Idempotency-Key to attach") {
		t.Errorf("job A's key now holds job %s, and its retry is refused (%d %v), yet A's next_step still advises it: %q",
			n.job(), retry.status, retry.body["type"], step)
	}
}
