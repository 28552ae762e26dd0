package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// Advisory locks are the database's, not a schema's: two routers in two
// schemas of one database (and the tests, each in a schema of its own) took
// one lock for owners of the same name, so one installation's held
// max_live_jobs lock stalled, then failed busy, the other's limited claims
// (and the store's tests, all using "acme", failed now and then when run
// side by side). The lock's key names the schema.
func TestOwnerLimitLockIsTheSchemas(t *testing.T) {
	other, b := setup(t), setup(t)
	other.hold(t, store.LiveLimitLockSQL, []string{"acme"}) // held as a claim batch in another schema holds it
	_, created, err := b.st.CreateJob(context.Background(), limitedClaim(t, "acme", "schema-own"))
	if err != nil || !created {
		t.Fatalf("a limited claim while another schema's acme holds its max_live_jobs lock: created %v, err %v; "+
			"want created: the lock is the schema's", created, err)
	}
}
