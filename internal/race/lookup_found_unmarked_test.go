package race_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt not marked as sent for lookup — NULL: created before migration
// 0035, or by a replica of the previous version, whose request may well have
// carried the metadata — is still looked up, and one the provider's record
// holds is resolved from it: a record found is proof whatever the mark. Only
// "no record" is not trusted for it (rrecov13 F1).
func TestUnmarkedAttemptTheLookupFindsIsResolved(t *testing.T) {
	srv := &storedCompletionsServer{stored: map[string]map[string]any{}}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	oa, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "openai", BaseURL: ts.URL + "/v1", APIKey: "sk-test", Model: "gpt-test",
		SupportsLookup: true})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{{Name: "openai", Adapter: oa}}})
	ctx := context.Background()

	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "lookup-unmarked-found", Fingerprint: fp,
		PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "replica-before", LeaseFor: time.Hour}
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	if !plan.First().Lookup {
		t.Fatal("the first attempt on a target whose provider sends the lookup metadata is not marked so")
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	plan.Discard()
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	// Sent (stored by the provider), then the router died; the attempt
	// reads as one created before the column existed.
	if _, err := oa.Complete(ctx, &providers.Request{AttemptID: job.Attempts[0].ID, JobID: job.ID,
		Messages: []providers.Message{{Role: "user", Content: "Subject: Login. I cannot log in."}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lookup = NULL, lease_expires_at = now() - interval '1 second' WHERE id = $1`,
		job.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}

	b.Runner.RecoverOnce(ctx, 10) // expires the lease, looks the attempt up, finds it
	j, err := b.Store.GetJobAny(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != store.JobSucceeded || j.Attempts[0].State != store.AttemptWon || srv.processed() != 1 {
		t.Fatalf("job %s, attempt 1 %s, provider processed %d requests: want the found record to resolve the job succeeded "+
			"with one request processed", j.State, j.Attempts[0].State, srv.processed())
	}
}
