package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A key's revoked_at is stamped when its revocation is about to commit, after
// its lock waits, not when its transaction began: replicas can serve the key
// from their caches until the revocation commits, and `router keys revoke`
// run again waits what is left of auth.cache_ttl from revoked_at, so a
// revoked_at taken before a lock wait (up to store.KeyLockWait each) cut that
// wait short. Before, revoked_at was the transaction's now().
func TestRevokedAtIsTakenAfterTheLockWaits(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(b *bundle, id int64) (pgx.Tx, int)
	}{
		{"the key's row", func(b *bundle, id int64) (pgx.Tx, int) {
			return b.hold(t, `SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE`, id)
		}},
		{"the webhook owners table", func(b *bundle, _ int64) (pgx.Tx, int) {
			return holdTableLock(t, b, `LOCK TABLE webhook_owners IN ROW EXCLUSIVE MODE`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			if _, err := b.st.CreateAPIKey(ctx, "acme"); err != nil {
				t.Fatal(err)
			}
			keys, err := b.st.ListAPIKeys(ctx)
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys %v: %v", keys, err)
			}
			id := keys[0].ID
			held, pid := tc.hold(b, id)

			type result struct {
				at  time.Time
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := b.st.RevokeAPIKeyResult(ctx, id)
				done <- result{r.RevokedAt, err}
			}()
			b.awaitBlockedBy(t, pid)
			var freed time.Time // on the database clock, while the revocation waits
			if err := held.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&freed); err != nil {
				t.Fatal(err)
			}
			if err := held.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.at.Before(freed) {
				t.Fatalf("revoked_at %s is before the held lock was freed at %s (%s early)",
					r.at.Format(time.RFC3339Nano), freed.Format(time.RFC3339Nano), freed.Sub(r.at))
			}
		})
	}
}

// holdTableLock opens a transaction that takes a table lock with q and keeps
// it open; it returns the transaction and its backend's pid.
func holdTableLock(t *testing.T, b *bundle, q string) (pgx.Tx, int) {
	t.Helper()
	tx, pid := b.begin(t)
	if _, err := tx.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return tx, pid
}
