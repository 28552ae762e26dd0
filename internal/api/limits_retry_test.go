package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// At max_live_jobs, POST /v1/jobs/{id}/retry is refused 429 only when the
// retry would make the job live again. A job that cannot be retried anyway
// gets the 409 it gets under the limit, saying why: one that is not failed
// (not-retryable, attempt-blocked), or a failed one whose expired key a newer
// job has claimed (idempotency-key-rebound, naming it). None changes.
func TestRetryAtLiveLimitOfJobThatCannotBeRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var failing atomic.Bool
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 2}},
		liveRefresh: time.Nanosecond, // every admission reads the database's count
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Quick") {
					return providers.Step{Output: validTriage}
				}
			}
			if failing.Load() {
				return providers.Step{Status: http.StatusBadRequest}
			}
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	failing.Store(true)
	created := func(key, subject, state string) string {
		t.Helper()
		r := b.create(t, acmeKey, key, triageBody(subject), "Prefer", "wait=30")
		if r.body["state"] != state {
			t.Fatalf("job %s: %d %s, want %s", key, r.status, r.raw, state)
		}
		return r.job()
	}
	rebound1 := created("rebound-1", "One", "failed")
	rebound2 := created("rebound-2", "Two", "failed")
	expired := created("expired", "Three", "failed")
	succeeded := created("succeeded", "Quick", "succeeded")
	failing.Store(false)
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE idempotency_key IN ('rebound-1', 'rebound-2', 'expired')`); err != nil {
		t.Fatal(err)
	}
	// Newer jobs claim the expired keys and stay live: the owner is at its
	// limit. One is another request, the other the same one sent again.
	live := func(key, subject string) string {
		t.Helper()
		r := b.create(t, acmeKey, key, triageBody(subject))
		if r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("new job under expired key %s: %d %s, want 202", key, r.status, r.raw)
		}
		return r.job()
	}
	newer1 := live("rebound-1", "Other")
	newer2 := live("rebound-2", "Two")

	retry := func(id string) reply {
		t.Helper()
		return b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	}
	for old, newer := range map[string]string{rebound1: newer1, rebound2: newer2} {
		if r := retry(old); r.status != http.StatusConflict || !strings.HasSuffix(r.body["type"].(string), "/idempotency-key-rebound") ||
			!strings.Contains(r.body["detail"].(string), newer) {
			t.Fatalf("retry at the limit of a failed job whose key job %s claimed: %d %s, want 409 idempotency-key-rebound", newer, r.status, r.raw)
		}
	}
	if r := retry(succeeded); r.status != http.StatusConflict || !strings.HasSuffix(r.body["type"].(string), "/not-retryable") {
		t.Fatalf("retry at the limit of a succeeded job: %d %s, want 409 not-retryable", r.status, r.raw)
	}
	if r := retry(newer1); r.status != http.StatusConflict {
		t.Fatalf("retry at the limit of a running job: %d %s, want 409", r.status, r.raw)
	}
	// A failed job whose expired key no newer job holds would be revived:
	// refused at the limit.
	if r := retry(expired); r.status != http.StatusTooManyRequests || r.body["limit"] != "max_live_jobs" {
		t.Fatalf("retry at the limit of a failed job whose key expired unclaimed: %d %s, want 429", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'failed'`,
		[]string{rebound1, rebound2, expired}); n != 3 {
		t.Fatalf("%d of the 3 failed jobs still failed after refused retries", n)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'succeeded'`, succeeded); n != 1 {
		t.Fatal("a refused retry changed the succeeded job")
	}
}
