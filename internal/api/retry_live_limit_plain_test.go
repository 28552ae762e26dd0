package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// One rule for the look-ups before a refusal: a final one (422, 503
// no-eligible-provider or prompt-unavailable) waits for a transaction still
// writing the key or job, and the 429 of max_live_jobs, which is not final
// (its resend replays once the retry it repeats is visible), reads plainly —
// as POST /v1/jobs's 429 does. A keyed retry refused 429 waited for the
// job's row (store.AwaitRetryKeyHeld, a FOR SHARE lock per refusal, a write):
// with the row held, it was answered 503 busy after the wait, not the 429.
// Here the row is held FOR UPDATE for the whole request, and the 429 comes
// back while it still is.
func TestRetryRefusedLiveLimitReadsPlainly(t *testing.T) {
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Live") {
					return providers.Step{Hang: true} // acme's one live job
				}
			}
			return providers.Step{Status: 400}
		},
	})
	id := failedJob(t, b, "retry-429-plain")
	if live := b.create(t, acmeKey, "retry-429-live", triageBody("Live")); live.status != http.StatusAccepted {
		t.Fatalf("set-up: the live job: %d %s", live.status, live.raw)
	}
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // rolled back below
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	// Answered while the row is still held: released only below.
	r := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-429")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("a keyed retry at max_live_jobs, the job's row held by another transaction: %d %s; "+
			"want the 429 too-many-live-jobs at once (a plain read: no wait for the row)", r.status, r.raw)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// A retry made with the key and visible (its round failed again) is
	// still the replay at the limit: the plain look-up answers it.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET retry_key = 'retry-429' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if r := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-429"); r.status != http.StatusOK ||
		r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a resend of a visible retry at max_live_jobs: %d %s; want 200 Idempotent-Replayed", r.status, r.raw)
	}
}
