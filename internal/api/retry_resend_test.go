package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// failedJob creates a job that fails at once (the provider refuses it) and
// returns its id.
func failedJob(t *testing.T, b *bundle, key string) string {
	t.Helper()
	r := b.create(t, acmeKey, key, triageBody("Resent"), "Prefer", "wait=10")
	id := r.job()
	if s, _ := r.body["state"].(string); s != "failed" {
		t.Fatalf("set-up: job %s is %v, want failed: %d %s", id, r.body["state"], r.status, r.raw)
	}
	return id
}

func refused(int, *providers.Request) providers.Step { return providers.Step{Status: 400} }

// A retry whose answer was lost, resent with the same Idempotency-Key after
// its round failed again, is the same retry: no second round of provider
// calls; it is answered with the job as it stands, marked
// Idempotent-Replayed. A retry with another key is a new round.
func TestResentRetryWithTheSameKeyIsOneRetry(t *testing.T) {
	b := setup(t, options{respond: refused})
	id := failedJob(t, b, "retry-resent")
	before := b.primary.Calls()
	first := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-once", "Prefer", "wait=10")
	second := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-once", "Prefer", "wait=10")
	calls := b.primary.Calls() - before
	if first.status != http.StatusOK || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first retry answered %d (Idempotent-Replayed %q): %s", first.status, first.header.Get("Idempotent-Replayed"), first.raw)
	}
	if calls != 1 {
		t.Fatalf("one retry intent (same Idempotency-Key), %d provider calls", calls)
	}
	if second.status != http.StatusOK || second.header.Get("Idempotent-Replayed") != "true" ||
		second.body["state"] != "failed" || second.header.Get("X-Router-Job-Id") != id {
		t.Fatalf("resent retry answered %d (Idempotent-Replayed %q, X-Router-Job-Id %q): %s; want 200, the failed job, replayed",
			second.status, second.header.Get("Idempotent-Replayed"), second.header.Get("X-Router-Job-Id"), second.raw)
	}
	if v1, v2 := first.body["version"], second.body["version"]; v1 != v2 {
		t.Errorf("the resend changed the job: version %v, then %v", v1, v2)
	}
	third := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-twice", "Prefer", "wait=10")
	if third.status != http.StatusOK || third.header.Get("Idempotent-Replayed") != "" || b.primary.Calls()-before != 2 {
		t.Fatalf("retry with a new key: %d (Idempotent-Replayed %q), %d provider calls in all; want 200, a new round (2 calls)",
			third.status, third.header.Get("Idempotent-Replayed"), b.primary.Calls()-before)
	}
}

// Two resends of one retry at once, both past every check the API makes
// before the store's transaction (held here on the owner's max_live_jobs
// lock, which the retry's transaction takes first): one round, both
// answered 200 with the job, one of them replayed — not a 409 for a job
// already running again.
func TestConcurrentResentRetriesAreOneRetry(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 100}},
		respond: func(call int, req *providers.Request) providers.Step {
			if call > 1 {
				<-release // the retry's round runs until both are answered
			}
			return providers.Step{Status: 400}
		},
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	id := failedJob(t, b, "retry-concurrent")
	before := b.primary.Calls()
	ctx := context.Background()
	holder, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck // committed below
	var holderPID int
	if err := holder.QueryRow(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)) l`, "acme").Scan(&holderPID); err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		replies [2]reply
		errs    [2]error
	)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i], errs[i] = send(b.srv.URL+"/v1/jobs/"+id+"/retry", "POST", acmeKey, "", "Idempotency-Key", "retry-once")
		}()
	}
	for deadline := time.Now().Add(time.Minute); ; {
		// Only those the holder blocks: pg_stat_activity is the cluster's,
		// and other tests (other packages' too, run at the same time on the
		// same PostgreSQL) wait on max_live_jobs locks of their own schemas.
		// Counted with them, one retry waiting beside another test's waiter
		// made 2 (the holder then committed before the other retry came:
		// nothing was tested), and both beside it made 3, never 2, until
		// their lock wait (2 s) ran out and they were answered 503.
		n := b.count(t, `SELECT count(*) FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%max_live_jobs%'`, holderPID)
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d retries wait for the owner's lock, want 2", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	replayed := 0
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if r.status != http.StatusOK {
			t.Fatalf("resend %d answered %d: %s; want 200 with the job", i+1, r.status, r.raw)
		}
		if r.header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
	}
	if replayed != 1 {
		t.Fatalf("%d of the two resends replayed, want 1", replayed)
	}
	close(release)
	w := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, "", "Prefer", "wait=10")
	if w.body["state"] != "failed" {
		t.Fatalf("job after its retried round: %s", w.raw)
	}
	if calls := b.primary.Calls() - before; calls != 1 {
		t.Fatalf("two resends of one retry made %d provider calls, want 1 (one round)", calls)
	}
}

// A retry's Idempotency-Key is checked as POST /v1/jobs checks its own, with
// the same words; a refused retry changes nothing.
func TestRetryWithABadIdempotencyKeyIsRefused(t *testing.T) {
	b := setup(t, options{respond: refused})
	id := failedJob(t, b, "retry-bad-key")
	for _, c := range []struct {
		name string
		hdr  []string
		want string
	}{
		{"256 characters", []string{"Idempotency-Key", strings.Repeat("k", 256)}, "longer than 255 characters"},
		{"two headers", []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, "send exactly one Idempotency-Key header"},
		{"empty", []string{"Idempotency-Key", ""}, "is empty"},
	} {
		r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", c.hdr...)
		if r.status != http.StatusBadRequest || r.body["type"] == nil || !strings.Contains(string(r.raw), c.want) ||
			!strings.HasSuffix(r.body["type"].(string), "invalid-idempotency-key") {
			t.Errorf("retry with an Idempotency-Key of %s: %d %s; want 400 invalid-idempotency-key saying %q", c.name, r.status, r.raw, c.want)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = '`+id+`' AND state = 'failed' AND retry_key IS NULL`); n != 1 {
		t.Error("a refused retry changed the job")
	}
}
