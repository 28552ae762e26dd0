package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

// A retry of a limited owner's failed job whose owner's max_live_jobs lock
// another transaction holds past the store's wait (a creation of the owner's
// slow to commit, another retry) is answered 503 busy saying that the owner's
// live-jobs check is busy — not that the job is held, which nothing holds —
// and the job stays failed. Found in review.
func TestRetryLiveLimitLockWaitIsA503NamingTheCheck(t *testing.T) {
	b := setup(t, options{respond: refused, ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 100}}})
	id := failedJob(t, b, "retry-limit-busy")
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme"); err != nil {
		t.Fatal(err)
	}
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	detail, _ := r.body["detail"].(string)
	t.Logf("%d %s", r.status, detail)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
		t.Fatalf("retry while the owner's limit lock is held: %d Retry-After %q %s; want 503 busy with Retry-After 1",
			r.status, r.header.Get("Retry-After"), r.raw)
	}
	if !strings.Contains(detail, "live-jobs check (limits.max_live_jobs) is busy") || strings.Contains(detail, "holds job") ||
		!strings.Contains(detail, "nothing was stored") {
		t.Errorf("the 503 does not say that the owner's live-jobs check is busy (and nothing stored), or blames the job: %s", detail)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed'`, id); n != 1 {
		t.Fatalf("after the busy retry the job is not failed: nothing should have changed")
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, ""); r.status != http.StatusOK {
		t.Errorf("the same retry once the lock was released: %d %s", r.status, r.raw)
	}
}
