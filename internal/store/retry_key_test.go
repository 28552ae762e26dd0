package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// failAgain fails the running (retried) job id's new round.
func failAgain(t *testing.T, b *bundle, id string) {
	t.Helper()
	ctx := context.Background()
	a := startAttempt(t, b, id, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if state, err := b.st.SettleJob(ctx, id, "every provider failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle the retried round: %s %v", state, err)
	}
}

// A retry resent with the key of the job's latest retry (its answer was
// lost) changes nothing once that retry's round has failed again: no second
// round, the job's version and its own idempotency key's expiry as they were.
// Another key is a new round, and so is a retry without one; after a keyless
// retry, an earlier retry's key no longer names the latest retry.
func TestRetryWithTheLatestRetrysKeyChangesNothing(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := failJob(t, b, "own-key")
	retry := func(key string) bool {
		t.Helper()
		replayed, err := b.st.RetryJobKeyed(ctx, "acme", j.ID, key, 0)
		if err != nil {
			t.Fatalf("retry with key %q: %v", key, err)
		}
		return replayed
	}
	state := func() (string, int64) {
		t.Helper()
		got, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State, got.Version
	}
	keyExpiry := func() string {
		t.Helper()
		var s string
		if err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(expires_at::text, 'never') FROM idempotency_keys WHERE job_id = $1`, j.ID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	if retry("retry-1") {
		t.Fatal("the first retry with its key was taken for a replay")
	}
	if s, _ := state(); s != store.JobRunning {
		t.Fatalf("retried job is %s, want running", s)
	}
	// A resend while the round runs: nothing changes.
	_, v := state()
	if !retry("retry-1") {
		t.Fatal("a resend of the running retry was not a replay")
	}
	if s, v2 := state(); s != store.JobRunning || v2 != v {
		t.Fatalf("after a resend of the running retry: %s version %d, want running version %d", s, v2, v)
	}
	failAgain(t, b, j.ID)
	_, v = state()
	expiry := keyExpiry()
	if expiry == "never" {
		t.Fatal("set-up: the failed job's own key does not expire")
	}
	if !retry("retry-1") {
		t.Fatal("a resend of the retry after its round failed started a new round")
	}
	if s, v2 := state(); s != store.JobFailed || v2 != v {
		t.Fatalf("after a resend of the retry whose round failed: %s version %d, want failed version %d unchanged", s, v2, v)
	}
	if e := keyExpiry(); e != expiry {
		t.Fatalf("a replayed retry moved the job's own key's expiry from %s to %s", expiry, e)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1`, j.ID); n != 2 {
		t.Fatalf("%d attempts, want 2 (the first round's, the retry's)", n)
	}

	// Another key: a new round. No key: a new round, each time.
	if retry("retry-2") {
		t.Fatal("a retry with a new key was taken for a replay")
	}
	failAgain(t, b, j.ID)
	for i := range 2 {
		if retry("") {
			t.Fatalf("keyless retry %d was taken for a replay", i+1)
		}
		failAgain(t, b, j.ID)
	}
	// The latest retry had no key: "retry-2" names an earlier one.
	if retry("retry-2") {
		t.Fatal("the key of a retry before the latest (keyless) one replayed it")
	}
	if s, _ := state(); s != store.JobRunning {
		t.Fatalf("job is %s, want running", s)
	}
}

// The retry's key is its own, not the job's idempotency key: a retry with the
// job's key as its key leaves the key bound to the job (a create with it
// replays the job; another request with it is still a reuse), and expiring
// when the job fails again.
func TestRetryKeyIsNotTheJobsIdempotencyKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := failJob(t, b, "shared")
	if replayed, err := b.st.RetryJobKeyed(ctx, "acme", j.ID, "shared", 0); err != nil || replayed {
		t.Fatalf("retry with the job's own key as the retry's: replayed=%v err=%v", replayed, err)
	}
	again, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "shared", `{"n":1}`))
	if err != nil || created || again.ID != j.ID {
		t.Fatalf("create with the job's key after the retry: created=%v err=%v, want the job replayed", created, err)
	}
	if _, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "shared", `{"n":2}`)); !errors.Is(err, store.ErrKeyReused) {
		t.Fatalf("another request with the job's key: %v, want ErrKeyReused", err)
	}
	failAgain(t, b, j.ID)
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
			WHERE j.id = $1 AND k.expires_at = j.finished_at + interval '1 hour'`, j.ID); n != 1 {
		t.Fatal("the job's own key does not expire on its retention after the retried round failed")
	}
	// A retry key names nothing across jobs: another failed job retried
	// with the same retry key is retried.
	other := failJob(t, b, "other")
	if replayed, err := b.st.RetryJobKeyed(ctx, "acme", other.ID, "shared", 0); err != nil || replayed {
		t.Fatalf("another job's retry with the same retry key: replayed=%v err=%v", replayed, err)
	}
}

// Two resends of one retry at once, both past every read before the job's
// lock (held here behind the owner's max_live_jobs lock, which a retry takes
// first): one retries the job, the other is a replay of it, not a 409 for a
// running job nor a second round.
func TestConcurrentResendsOfARetryAreOneRetry(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := failJob(t, b, "concurrent")
	failed, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock(`+store.LiveLimitLockHashSQL+`)`, "acme"); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		replayed [2]bool
		errs     [2]error
	)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replayed[i], errs[i] = b.st.RetryJobKeyed(ctx, "acme", j.ID, "resent", 100)
		}()
	}
	// Both wait for the owner's lock before either reads the job.
	for deadline := time.Now().Add(time.Minute); ; {
		n := count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'`)
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
	for i, err := range errs {
		if err != nil {
			t.Fatalf("resend %d: %v", i+1, err)
		}
	}
	if replayed[0] == replayed[1] {
		t.Fatalf("replayed %v: want one retry and one replay of it", replayed)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil || got.State != store.JobRunning || got.Version != failed.Version+1 {
		t.Fatalf("job after the resends: %+v %v, want running, changed once (version %d)", got, err, failed.Version+1)
	}
}
