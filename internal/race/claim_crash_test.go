package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// crashAfterClaim creates a job as the API does — planned, its first attempt
// `running` in the claim's commit — for a router ("dead-router") that died
// before it sent the request, and waits until the leases it took expire.
func crashAfterClaim(t *testing.T, b *racetest.Bundle) *store.Job {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "crash-after-claim", Fingerprint: fp,
		PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "dead-router", LeaseFor: time.Millisecond}
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	plan.Discard() // the router dies here: the request is never sent
	if err != nil || !created || len(job.Attempts) != 1 || job.Attempts[0].State != store.AttemptRunning {
		t.Fatalf("create job: %v created=%v, %+v", err, created, job)
	}
	// Wait, on the database's clock, until the attempt's lease (and the job's,
	// taken in the same statement) has expired.
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM lease_expires_at - clock_timestamp())) + 0.001)
		FROM attempts WHERE id = $1`, job.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	return job
}

// SPEC §6.8: a job whose row committed but whose first attempt never started
// is picked up and started exactly once. The claim commits the first attempt
// `running` (two durable commits per job); a router that dies before sending
// it leaves it to expire as unknown (lease_expired). Reconciliation's lookup
// then finds no record of it, and the attempt is resolved failed — which
// counted its target as tried, so a job with one target failed although its
// provider was never called. The provider provably did no work and the
// target did nothing wrong: the job runs on that target again and succeeds.
// Found by review.
func TestCrashAfterClaimIsStartedOnceAfterNoRecord(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	job := crashAfterClaim(t, b.Bundle)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 {
		t.Fatalf("job %s (%v) with attempts %+v: want it won by a second attempt", j.State, derefString(j.Error), j.Attempts)
	}
	first, second := j.Attempts[0], j.Attempts[1]
	if first.State != store.AttemptFailed || !strings.Contains(string(first.Error), "lease_expired") || !strings.Contains(string(first.Error), "no record") {
		t.Fatalf("first attempt %s %s: want it failed, reconciled as never worked on", first.State, first.Error)
	}
	if second.Provider != "primary" || second.Role != store.RolePrimary || second.State != store.AttemptWon {
		t.Fatalf("second attempt %+v: want the primary's, won", second)
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want exactly once", n)
	}
}

// The attempt the dead router never sent, which reconciliation found its
// provider never worked on, does not count against max_attempts (SPEC §6.8:
// started exactly once): with max_attempts 1 the job is sent once and wins.
func TestCrashAfterClaimRedispatchIsNotCountedAgainstMaxAttempts(t *testing.T) {
	b := setup(t, race.Route{MaxAttempts: 1}, provSpec{name: "primary", respond: ok(validTriage)})
	job := crashAfterClaim(t, b.Bundle)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 {
		t.Fatalf("job %s (%v) with %d attempts: want it succeeded on its second attempt (the first never sent)", j.State, derefString(j.Error), len(j.Attempts))
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want exactly once", n)
	}
}

// Without a lookup nothing proves the provider did no work: the attempt
// stays unknown until it is resolved (an operator's resolve, or the job's
// cancellation) — the price of committing the first attempt with the claim.
func TestCrashAfterClaimWithoutLookupStaysUnknown(t *testing.T) {
	p := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.OK(validTriage)})
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: noLookup{p}}}})
	job := crashAfterClaim(t, b)
	b.Runner.RecoverOnce(context.Background(), 10)
	j := b.WaitSettled(t, job.ID)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown || p.Calls() != 0 {
		t.Fatalf("job %s with attempts %+v, %d calls: want it unknown, never sent", j.State, j.Attempts, p.Calls())
	}
}
