package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// countingAdmission admits every provider but those told to refuse, counting
// the admissions asked; its non-consuming view (State) admits every one.
type countingAdmission struct {
	mu     sync.Mutex
	asked  map[string]int
	refuse map[string]string
}

func (a *countingAdmission) Admit(provider string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[provider]++
	if why := a.refuse[provider]; why != "" {
		return nil, false, why
	}
	return func(race.Outcome) {}, true, ""
}

func (a *countingAdmission) State(string) (bool, string) { return true, "" }

func (a *countingAdmission) askedOf(provider string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked[provider]
}

func deferredJob(t *testing.T, b *racetest.Bundle, key string, plan store.JobPlan) *store.Job {
	t.Helper()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: "1", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second, First: plan.First()}
	job, created, err := b.Store.CreateJob(context.Background(), nj)
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return job
}

// PlanDeferred chooses the first attempt's target without taking its
// breaker's admission; AdmitFirst takes it once the job exists, and a plan
// discarded (its key held by another job) never took one.
func TestPreflightDeferredAdmitsAfterTheClaim(t *testing.T) {
	adm := &countingAdmission{asked: map[string]int{}, refuse: map[string]string{}}
	b := racetest.New(t, racetest.Options{Admission: adm, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	plan, _, ok, err := b.Runner.PlanDeferred(&store.Job{Operation: "triage", PromptVersion: "1", Route: "default", Input: input})
	if err != nil || !ok || plan.First() == nil || plan.First().Provider != "primary" {
		t.Fatalf("plan: ok=%v err=%v first=%+v", ok, err, plan.First())
	}
	if n := adm.askedOf("primary"); n != 0 {
		t.Fatalf("planning asked the breaker %d times, want none", n)
	}
	discarded, _, _, _ := b.Runner.PlanDeferred(&store.Job{Operation: "triage", PromptVersion: "1", Route: "default", Input: input})
	discarded.Discard()
	job := deferredJob(t, b, "deferred-1", plan)
	if !plan.(*race.Plan).AdmitFirst(context.Background(), job) {
		t.Fatal("AdmitFirst refused an admitting breaker")
	}
	if n := adm.askedOf("primary"); n != 1 {
		t.Fatalf("the breaker was asked %d times, want once (the created job's)", n)
	}
	b.Runner.SubmitNew(job, plan)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("job %s with %d attempts, want succeeded on its planned first attempt", j.State, len(j.Attempts))
	}
}

// When the breaker refuses the planned target once the job exists (another
// job took a half-open breaker's last probe meanwhile), the first attempt is
// never sent: recorded not_sent, it counts neither as the target tried nor
// against max_attempts, and the job runs as a resumed one, admitted elsewhere.
func TestPreflightDeferredRefusedAfterTheClaim(t *testing.T) {
	adm := &countingAdmission{asked: map[string]int{}, refuse: map[string]string{}}
	b := racetest.New(t, racetest.Options{Admission: adm, Route: race.Route{MaxAttempts: 1}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	plan, _, ok, err := b.Runner.PlanDeferred(&store.Job{Operation: "triage", PromptVersion: "1", Route: "default", Input: input})
	if err != nil || !ok || plan.First() == nil || plan.First().Provider != "primary" {
		t.Fatalf("plan: ok=%v err=%v first=%+v", ok, err, plan.First())
	}
	job := deferredJob(t, b, "deferred-2", plan)
	adm.mu.Lock()
	adm.refuse["primary"] = "circuit breaker half-open: its one probe is in flight"
	adm.mu.Unlock()
	if plan.(*race.Plan).AdmitFirst(context.Background(), job) {
		t.Fatal("AdmitFirst admitted a refusing breaker")
	}
	if plan.First() != nil {
		t.Fatal("the plan still holds the first attempt it could not send")
	}
	b.Runner.SubmitNew(job, plan)
	j := b.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 {
		t.Fatalf("job %s with %d attempts, want succeeded with two", j.State, len(j.Attempts))
	}
	if a := j.Attempts[0]; a.Provider != "primary" || !store.NotSent(a) {
		t.Errorf("first attempt %s on %s (%s), want the primary's, never sent", a.State, a.Provider, a.Error)
	}
	if a := j.Attempts[1]; a.Provider != "fallback" || a.State != store.AttemptWon {
		t.Errorf("second attempt %s on %s, want the fallback's, won (max_attempts 1 does not count the unsent one)", a.State, a.Provider)
	}
	if n := b.Prov["primary"].Calls(); n != 0 {
		t.Errorf("the primary was called %d times, want never", n)
	}
}
