package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// failJob makes a new job failed through the store's own transitions.
func failJob(t *testing.T, b *bundle, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if state, err := b.st.SettleJob(ctx, j.ID, "every provider failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s %v", state, err)
	}
	return j
}

func expireKeys(t *testing.T, b *bundle) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
}

// A failed job whose expired key was claimed by a newer job cannot be revived:
// one live job per key. The refusal names the newer job; nothing changes.
func TestRetryJobRefusedWhenKeyClaimedByNewerJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old := failJob(t, b, "rk")
	expireKeys(t, b)
	newer, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "rk", `{"n":2}`))
	if err != nil || !created {
		t.Fatalf("claim of the expired key: created=%v err=%v", created, err)
	}
	err = b.st.RetryJob(ctx, "acme", old.ID)
	if !errors.Is(err, store.ErrKeyRebound) || !strings.Contains(err.Error(), newer.ID) {
		t.Fatalf("retry: err=%v, want ErrKeyRebound naming %s", err, newer.ID)
	}
	j, _ := b.st.GetJob(ctx, "acme", old.ID)
	if j.State != store.JobFailed {
		t.Fatalf("old job is %s after a refused retry, want failed", j.State)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE owner = 'acme' AND idempotency_key = 'rk' AND state NOT IN ('failed','succeeded','cancelled')`); n != 1 {
		t.Fatalf("%d live jobs for one key, want 1", n)
	}
}

// A failed job whose key expired but was not claimed takes the key back on
// retry: the key no longer expires, and a claim with it replays the job.
func TestRetryJobRebindsUnclaimedExpiredKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old := failJob(t, b, "rk2")
	expireKeys(t, b)
	if err := b.st.RetryJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE job_id = $1 AND expires_at IS NULL`, old.ID); n != 1 {
		t.Fatal("the retried job's key still expires")
	}
	again, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "rk2", `{"n":1}`))
	if err != nil || created || again.ID != old.ID {
		t.Fatalf("claim after the retry: created=%v err=%v, want the retried job", created, err)
	}
}

// A retry and a claim of the same expired key, concurrently: exactly one wins,
// never two live jobs for the key.
func TestRetryJobRacesClaim(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		key := "race-" + string(rune('a'+i))
		old := failJob(t, b, key)
		expireKeys(t, b)
		var (
			wg       sync.WaitGroup
			retryErr error
			created  bool
			claimErr error
		)
		wg.Add(2)
		go func() { defer wg.Done(); retryErr = b.st.RetryJob(ctx, "acme", old.ID) }()
		go func() {
			defer wg.Done()
			_, created, claimErr = b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{"n":2}`))
		}()
		wg.Wait()
		retried := retryErr == nil
		if retryErr != nil && !errors.Is(retryErr, store.ErrKeyRebound) {
			t.Fatal(retryErr)
		}
		if claimErr != nil && !errors.Is(claimErr, store.ErrKeyReused) {
			t.Fatal(claimErr)
		}
		if retried == created {
			t.Fatalf("round %d: retried=%v created=%v: exactly one must win", i, retried, created)
		}
		if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = $1 AND state NOT IN ('failed','succeeded','cancelled')`, key); n != 1 {
			t.Fatalf("round %d: %d live jobs for one key", i, n)
		}
	}
}
