package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// Whether an attempt can be resolved is checked before its result is judged
// (docs/api.md): an attempt that is not unknown (one already resolved) is 409
// not-unknown and an attempt the job does not have is 404 attempt-not-found,
// whatever the result — not 422 invalid-result for a result that breaks the
// contract, nor a retryable 503 prompt-unavailable when this replica does
// not have the job's prompt version (a retry elsewhere would get the 409).
func TestResolveChecksTheAttemptBeforeTheResult(t *testing.T) {
	b := setup(t, options{
		timeout: 50 * time.Millisecond,
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
	})
	id := b.create(t, acmeKey, "order-1", triageBody("hang"), "Prefer", "wait=30").job()
	const broken = `{"outcome":"succeeded","result":{"category":"weather"}}`
	resolve := func(seq, body string) reply {
		return b.do(t, "POST", "/v1/jobs/"+id+"/attempts/"+seq+"/resolve", acmeKey, body)
	}
	isType := func(r reply, typ string) bool {
		s, _ := r.body["type"].(string)
		return strings.HasSuffix(s, typ)
	}
	if r := resolve("2", broken); r.status != http.StatusNotFound || !isType(r, "attempt-not-found") {
		t.Errorf("a result that breaks the contract for an attempt the job does not have: %d %s, want 404 attempt-not-found", r.status, r.raw)
	}
	if r := resolve("1", `{"outcome":"succeeded","result":`+validTriage+`}`); r.status != http.StatusOK {
		t.Fatalf("first resolve: %d %s", r.status, r.raw)
	}
	r := resolve("1", broken)
	if detail, _ := r.body["detail"].(string); r.status != http.StatusConflict || !isType(r, "not-unknown") || !strings.Contains(detail, "attempt 1 is won") {
		t.Errorf("a result that breaks the contract for an attempt already resolved: %d %s, want 409 not-unknown", r.status, r.raw)
	}
	// This replica no longer has the job's prompt version: the attempt,
	// already resolved, is still a final 409, with no Retry-After.
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET prompt_version = 'v-next' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	r = resolve("1", `{"outcome":"succeeded","result":`+validTriage+`}`)
	if r.status != http.StatusConflict || !isType(r, "not-unknown") || r.header.Get("Retry-After") != "" {
		t.Errorf("an attempt already resolved, on a replica without the job's prompt version: %d Retry-After %q %s, want 409 not-unknown",
			r.status, r.header.Get("Retry-After"), r.raw)
	}
	if r := resolve("3", `{"outcome":"succeeded","result":`+validTriage+`}`); r.status != http.StatusNotFound || !isType(r, "attempt-not-found") {
		t.Errorf("an attempt the job does not have, on a replica without the job's prompt version: %d %s, want 404", r.status, r.raw)
	}
	// A malformed resolution is still 400 first, whatever the attempt.
	if r := resolve("1", `{"outcome":"maybe"}`); r.status != http.StatusBadRequest {
		t.Errorf("a bad outcome for an attempt already resolved: %d %s, want 400", r.status, r.raw)
	}
}
