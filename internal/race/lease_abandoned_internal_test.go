package race

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An attempt its run abandoned (its end could not be recorded: unrecorded)
// is left to its lease's expiry, for recovery to mark it unknown. Its job's
// run goes on while other attempts are in flight, and the keeper renews the
// job's leases meanwhile: not the abandoned attempt's, or recovery could
// take it over only a lease after the whole run ended.
func TestAbandonedAttemptLeaseIsNotRenewed(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	r := New(Config{Store: db.Store, Lease: lease, LeaseOwner: "me"})
	r.keeperTicks = make(chan time.Time)
	passed := make(chan struct{}, 8)
	r.keeperPassed = func() { passed <- struct{}{} }
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "abandoned-lease", PromptVersion: "3", Route: "default",
		Input: input, LeaseOwner: "me", LeaseFor: lease,
		First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
	job, created, err := db.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	now := time.Now()
	r.mu.Lock()
	r.holdLease(job.ID, func(error) {}, now)
	r.mu.Unlock()
	r.abandonLease(job.ID, att)
	leases := func() (jobLease, attemptLease time.Time) {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `SELECT j.lease_expires_at, a.lease_expires_at FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE a.id = $1`,
			att).Scan(&jobLease, &attemptLease); err != nil {
			t.Fatal(err)
		}
		return jobLease, attemptLease
	}
	jobBefore, attBefore := leases()
	// The keeper's first tick, a tick after the submit: the job is due.
	r.keeperTicks <- now.Add(lease / 3)
	<-passed
	jobAfter, attAfter := leases()
	if !jobAfter.After(jobBefore) {
		t.Fatalf("the job's lease was not renewed by the tick (%v, then %v): the rig is wrong", jobBefore, jobAfter)
	}
	if !attAfter.Equal(attBefore) {
		t.Fatalf("the abandoned attempt's lease was renewed (%v, then %v): recovery can take it over only a lease after its whole run ends",
			attBefore, attAfter)
	}
}
