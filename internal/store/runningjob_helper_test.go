package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// leasedJob creates acme's triage job under the idempotency key key, its
// orchestration lease held by replica-a for an hour. With running, the job is
// created running, its first attempt (p1, primary) in flight; without, it is
// pending with nothing in flight.
func leasedJob(t *testing.T, b *bundle, key string, running bool) *store.Job {
	t.Helper()
	nj := newJob(t, "acme", "triage", key, `{}`)
	nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Hour
	if running {
		nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
	}
	j, _, err := b.st.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// expireJobLease moves the job's orchestration lease into the past on the
// database's clock, as if its owner had stalled.
func expireJobLease(t *testing.T, b *bundle, jobID string) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, jobID); err != nil {
		t.Fatal(err)
	}
}
