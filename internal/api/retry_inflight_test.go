package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A keyed retry whose answer was lost is resent (docs/api.md: "choose one
// [Idempotency-Key] per retry intent and resend it when the retry's answer
// was lost"). The original is still committing on replica A (its
// transaction holds the job's row: the job running again, retry_key set);
// the resend reaches replica B, where the job's target has a smaller context
// window (a rolling configuration change). B's checks before the store's
// transaction read plainly (RetryKeyHeld, GetJob in retryEligible,
// JobHoldingKey in retryRevives): they see the job failed with no retry
// key, and B answers the final 422 input-too-long, "the job stays failed and
// needs a new request with a shorter input", for the retry that commits a
// moment later and runs. The client, told "failed, make a new request",
// makes a second job: a second charge. The same was fixed for POST /v1/jobs
// (ridem12 F1: the look-up before a final refusal waits for a transaction
// still writing the key); the retry's key look-up does not wait.
func TestRetryResendWaitsForInFlightRetry(t *testing.T) {
	b := setup(t, options{respond: refused, window: 1000})
	id := failedJob(t, b, "retry-inflight")
	ctx := context.Background()
	// The job's input as created on a replica with a larger window (fits
	// there, not in this replica's 1000 tokens).
	long := `{"subject":"Long","body":"` + strings.Repeat("word ", 3000) + `"}`
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET input = $2::jsonb WHERE id = $1`, id, long); err != nil {
		t.Fatal(err)
	}
	const retryKey = "retry-once"

	// Replica A's retry with retryKey, in flight: the job's row updated
	// (running again, its latest retry's key), not yet committed.
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := tx.Exec(ctx, `UPDATE jobs SET state = 'running', retry_key = $2, version = version + 1, updated_at = now()
		WHERE id = $1 AND state = 'failed'`, id, retryKey); err != nil {
		t.Fatal(err)
	}

	done := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+id+"/retry", "POST", acmeKey, "", "Idempotency-Key", retryKey)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	var early *reply
	select {
	case r := <-done:
		early = &r // answered while the original retry was still committing
	case <-time.After(5 * time.Second): // token counts are slow under -race
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := early
	if r == nil {
		got := <-done
		r = &got
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = '`+id+`' AND retry_key = '`+retryKey+`'`); n != 1 {
		t.Fatalf("the original retry did not commit")
	}
	replayed := r.status == http.StatusOK && r.header.Get("Idempotent-Replayed") == "true"
	if !replayed && r.status != http.StatusServiceUnavailable {
		t.Fatalf("a resend of the retry whose original was committing (committed after the answer: %v) was answered %d, "+
			"not the job replayed (200, Idempotent-Replayed) nor a 503 to resend; the retry was made and the job runs:\n%s",
			early != nil, r.status, r.raw)
	}
	if !replayed && (r.body["type"] != "https://router.dev/problems/busy" || r.header.Get("Retry-After") == "") {
		t.Fatalf("a 503 for a retry still committing should be busy with Retry-After (resend it): %v %s", r.header, r.raw)
	}
}

// Control (passes): the same in-flight retry, resent to a replica that does
// not refuse it before the store (the job fits its window), waits on the
// job's row in RetryJobKeyed and is answered with the job, replayed.
func TestRetryResendWaitsForInFlightRetryControl(t *testing.T) {
	b := setup(t, options{respond: refused})
	id := failedJob(t, b, "retry-inflight-ctl")
	ctx := context.Background()
	const retryKey = "retry-once-ctl"
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := tx.Exec(ctx, `UPDATE jobs SET state = 'running', retry_key = $2, version = version + 1, updated_at = now()
		WHERE id = $1 AND state = 'failed'`, id, retryKey); err != nil {
		t.Fatal(err)
	}
	done := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+id+"/retry", "POST", acmeKey, "", "Idempotency-Key", retryKey)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("control: %d %s", r.status, r.raw)
	}
}
