package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

// A creation whose owner's max_live_jobs lock another transaction holds past
// the store's wait (another replica's creation slow to commit, a retry of one
// of the owner's jobs) is answered 503 busy saying that the owner's live-jobs
// check is busy and that the same request may be sent again — not that its
// Idempotency-Key is held, which nothing holds. Found in review.
func TestLiveLimitLockWaitIsA503NamingTheCheck(t *testing.T) {
	b := setup(t, options{ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 100}}})
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme"); err != nil {
		t.Fatal(err)
	}
	check := func(what string, r reply, text string) {
		t.Helper()
		t.Logf("%s: %d %s", what, r.status, text)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Fatalf("%s while the owner's limit lock is held: %d Retry-After %q %s; want 503 busy with Retry-After 1",
				what, r.status, r.header.Get("Retry-After"), r.raw)
		}
		if !strings.Contains(text, "live-jobs check (limits.max_live_jobs) is busy") || strings.Contains(text, "holds Idempotency-Key") ||
			!strings.Contains(text, "nothing was stored") {
			t.Errorf("%s: the 503 does not say that the owner's live-jobs check is busy (and nothing stored), or blames the key: %s", what, text)
		}
	}
	r := b.create(t, acmeKey, "limit-busy-1", triageBody("Login broken"))
	detail, _ := r.body["detail"].(string)
	check("POST /v1/jobs", r, detail)
	if title, _ := r.body["title"].(string); title != "Live-jobs check busy" {
		t.Errorf("POST /v1/jobs: the problem's title is %q, want \"Live-jobs check busy\" (no row is held)", title)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "limit-busy-2")
	msg := ""
	if e, ok := r.body["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	}
	check("chat", r, msg)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := b.create(t, acmeKey, "limit-busy-1", triageBody("Login broken")); r.status/100 != 2 {
		t.Errorf("the same request sent again once the lock was released: %d %s", r.status, r.raw)
	}
}
