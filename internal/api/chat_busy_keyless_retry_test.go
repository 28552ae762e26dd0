package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

// A chat completion without an Idempotency-Key whose claim found its owner's
// max_live_jobs lock held past the store's wait is answered 503 busy, and
// nothing was stored: as every refusal before anything is stored (docs/chat.md,
// "SDK retries"), it carries no X-Should-Retry: false, so OpenAI's SDKs may
// resend it. It carried the header set for keyless calls before the claim
// (where a job may exist from then on). Found by review (rchat9 suspicion 3).
func TestChatKeylessBusyMayBeResentBySDK(t *testing.T) {
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
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusServiceUnavailable || code != "busy" || !strings.Contains(msg, "nothing was stored") {
		t.Fatalf("keyless chat while the owner's limit lock is held: %d %s; want 503 busy, nothing stored", r.status, r.raw)
	}
	if h := r.header.Values("X-Should-Retry"); len(h) != 0 {
		t.Errorf("keyless 503 busy (nothing stored) carries X-Should-Retry %q: docs/chat.md says refusals before anything is stored carry none, "+
			"so the SDK may resend them", h)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Errorf("%d jobs stored for a refusal that says nothing was stored", n)
	}
}
