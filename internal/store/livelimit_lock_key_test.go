package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// Schema and owner names may both contain '/'. The max_live_jobs lock's key
// joined them with '/' alone, so schema S with owner "x/y" and schema "S/x"
// with owner "y" took one lock: one installation's held lock stalled, then
// failed busy, the other's limited claims, although two schemas never wait
// on each other (TestOwnerLimitLockIsTheSchemas). The key leads with the
// schema's length.
func TestOwnerLimitLockKeyUnambiguous(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	other := pgx.Identifier{b.db.Schema + "/x"}.Sanitize()
	tx, _ := b.begin(t) // rolled back when the test ends: the schema with it
	for _, q := range []string{`CREATE SCHEMA ` + other, `SET LOCAL search_path TO ` + other} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Held as a claim batch of a router in schema S/x holds owner y's lock.
	if _, err := tx.Exec(ctx, store.LiveLimitLockSQL, []string{"y"}); err != nil {
		t.Fatal(err)
	}
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	_, created, err := b.st.CreateJob(guard, limitedClaim(t, "x/y", "slash-owner"))
	if err != nil || !created {
		t.Fatalf("owner x/y's limited claim in schema %s while schema %s/x's owner y holds its max_live_jobs lock: created %v, err %v; "+
			"want created: the two (schema, owner) pairs must not share a lock key", b.db.Schema, b.db.Schema, created, err)
	}
}
