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

// leaseOwner is the job's orchestration lease holder ("" when released).
func leaseOwner(t *testing.T, b *bundle, id string) string {
	t.Helper()
	var owner *string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM jobs WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil {
		return ""
	}
	return *owner
}

// SPEC §17: an attempt in flight when the process is told to stop finishes
// within the drain budget and wins; the job does not become unknown.
func TestStopLetsAnInFlightAttemptWin(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(0) // SIGTERM: from here on no attempt starts
	close(release)
	b.stop()
	j := b.job(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s attempts %+v, want succeeded by the in-flight attempt", j.State, j.Attempts)
	}
}

// SPEC §17: a job that would retry or fail over when the process stops is not
// settled and not left to its lease's expiry: its lease is released, and
// another replica takes it over on its next recovery pass and completes it.
func TestDrainHandsOverAJobWaitingForARetry(t *testing.T) {
	failed := make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 3, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				defer close(failed)
				// Retried on the same provider after Retry-After (below the
				// 30 s the router waits at most).
				return providers.Step{Status: 429, RetryAfter: 25 * time.Second}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-failed
	b.runner.Drain(0) // SIGTERM: the pending retry is dropped, nothing else starts
	b.stop()
	j := b.job(t, job.ID)
	if j.State != store.JobRunning && j.State != store.JobPending {
		t.Fatalf("job %s after stop, want it left running for another replica", j.State)
	}
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptFailed {
		t.Fatalf("attempts %+v, want only the failed first one", j.Attempts)
	}
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		t.Fatalf("job lease still held by %q after stop", owner)
	}
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Fatalf("fallback called %d times while draining", n)
	}
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(validTriage)}, {Name: "fallback", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j = other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("taken-over job %s: %v", j.State, j.Error)
	}
}

// A job the API creates (holding this process's lease) while the process
// stops is not run here: its lease is released at once for another replica.
func TestSubmitWhileDrainingReleasesTheNewJobsLease(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.runner.Drain(0)
	job := b.submitWithoutRunning(t, "test-runner")
	if owner := leaseOwner(t, b, job.ID); owner != "test-runner" {
		t.Fatalf("lease %q before submit", owner)
	}
	b.runner.SubmitNew(job, nil)
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		t.Fatalf("lease still held by %q", owner)
	}
	if n := b.prov["primary"].Calls(); n != 0 {
		t.Fatalf("provider called %d times while draining", n)
	}
}

// A job created with its first attempt from a plan made just before the drain
// is not run here: the attempt, never sent, is recorded as such (not left to
// expire as unknown) and the job's lease is released.
func TestSubmitWhileDrainingRecordsTheUnsentFirstAttempt(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)}, provSpec{name: "fallback", respond: ok(validTriage)})
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	plan, _, planned, err := b.runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default", Input: input})
	if err != nil || !planned || plan.First() == nil {
		t.Fatalf("plan: %v %v", err, planned)
	}
	b.runner.Drain(0)
	if p, _, _, _ := b.runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default", Input: input}); p != nil && p.First() != nil {
		t.Fatal("a plan made while draining has a first attempt")
	}
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, created, err := b.st.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "drain-first",
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second,
		First: plan.First()})
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create: %v %v %+v", err, created, job)
	}
	b.runner.SubmitNew(job, plan)
	j := b.job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled || !strings.Contains(string(j.Attempts[0].Error), "not_sent") {
		t.Fatalf("first attempt %+v, want cancelled as never sent", j.Attempts)
	}
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		t.Fatalf("lease still held by %q", owner)
	}
	if n := b.prov["primary"].Calls(); n != 0 {
		t.Fatalf("provider called %d times while draining", n)
	}
}
