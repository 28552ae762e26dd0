package breaker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A chat answer that misses the caller's own response_format schema fails
// over, but says nothing of the target's health: one tenant's requests whose
// schema no answer satisfies must not open the route's breakers, leaving
// every other tenant without an eligible provider (SPEC §10: the caller's
// faults do not count). Found by review.
func TestCallersOwnSchemaDoesNotOpenBreakers(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 3, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 3, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{}, set, nil, callerSchemaProviders()...)
	for i, j := range callerSchemaJobs(t, b, 3) {
		if j.State != store.JobFailed || len(j.Attempts) != 2 {
			t.Fatalf("chat job %d: %s with %d attempts, want failed after both targets", i, j.State, len(j.Attempts))
		}
	}
	for _, s := range set.Snapshot() {
		if s.State != "closed" {
			t.Errorf("breaker %s is %s after answers that missed only the caller's schema", s.Provider, s.State)
		}
	}
	// Another tenant's ordinary job.
	_, routing, ok, err := b.Runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default",
		Input: json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("tenant-a's impossible response_format opened every breaker of the route: tenant-b's job has no eligible provider: %s", routing)
	}
}

// callerSchemaJobs runs n chat jobs (owner tenant-a, keys k0…) on route
// default of b whose response_format no answer of callerSchemaProviders
// satisfies, and returns them settled: answers that miss only the caller's
// own schema, which say nothing of the targets' health.
func callerSchemaJobs(t *testing.T, b *raceBundle, n int) []*store.Job {
	t.Helper()
	in := chat.Input{
		Messages: []providers.Message{{Role: "user", Content: "say yes"}},
		ResponseFormat: &chat.ResponseFormat{Type: "json_schema", JSONSchema: &chat.JSONSchema{Name: "x",
			Schema: json.RawMessage(`{"type":"object","required":["answer"],"properties":{"answer":{"const":"yes"}}}`)}},
	}
	input, _ := json.Marshal(in)
	var jobs []*store.Job
	for i := 0; i < n; i++ {
		op := chat.Operation("default")
		fp, _ := store.Fingerprint(op, "", "default", input)
		nj := store.NewJob{Owner: "tenant-a", Operation: op, IdempotencyKey: fmt.Sprintf("k%d", i), Fingerprint: fp, Route: "default",
			Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second}
		plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: op, Route: "default", Input: input})
		if err != nil || !ok {
			t.Fatalf("plan %d: ok=%v err=%v", i, ok, err)
		}
		nj.First = plan.First()
		job, _, err := b.Store.CreateJob(context.Background(), nj)
		if err != nil {
			t.Fatal(err)
		}
		b.Runner.SubmitNew(job, plan)
		jobs = append(jobs, b.waitSettled(t, job.ID))
	}
	return jobs
}

// callerSchemaProviders are two healthy targets, primary and fallback, whose
// answer to a request with a response_format never satisfies it.
func callerSchemaProviders() []provSpec {
	healthy := func(_ int, req *providers.Request) providers.Step {
		if req.ResponseFormat != nil {
			return providers.Step{Output: `{"answer":"no"}`}
		}
		return providers.Step{Output: validTriage}
	}
	return []provSpec{{name: "primary", respond: healthy}, {name: "fallback", respond: healthy}}
}
