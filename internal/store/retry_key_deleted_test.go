package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A failed job whose key a newer job took over, and whose newer job
// retention has since deleted with its key row: the retry is refused as
// before (the key's history went on without it), and the refusal says the
// newer job is gone rather than naming "job " and nothing.
func TestRetryJobRefusedWhenKeysNewerJobIsDeleted(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old := failJob(t, b, "rk-gone")
	expireKeys(t, b)
	newer, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "rk-gone", `{"n":2}`))
	if err != nil || !created {
		t.Fatalf("claim of the expired key: created=%v err=%v", created, err)
	}
	// What retention deletes with the newer job: its key row (and the job).
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE job_id = $1`, newer.ID); err != nil {
		t.Fatal(err)
	}
	err = b.st.RetryJob(ctx, "acme", old.ID)
	if !errors.Is(err, store.ErrKeyRebound) {
		t.Fatalf("retry: err=%v, want ErrKeyRebound", err)
	}
	if msg := err.Error(); strings.Contains(msg, "claimed by job ;") || !strings.Contains(msg, "new key") {
		t.Fatalf("retry refused with %q; want it to say the newer job is gone and to send the request with a new key", msg)
	}
}
