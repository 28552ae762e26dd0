package breaker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A chat request naming one of its route's `models` sends that model to every
// target in place of the target's own. Its attempts are admitted and counted
// by the breaker of the provider × the model sent (SPEC §10, §15), not the
// target's: one tenant's requests for a model the providers do not serve
// opened the breakers of the targets' own models, and every other tenant's
// ordinary jobs were refused. Found by review (HIGH 1).
func TestSentModelFailuresOpenOnlyTheSentModelsBreaker(t *testing.T) {
	st := breaker.Settings{ConsecutiveFailures: 3, OpenFor: time.Minute}
	set := breaker.New(map[string]breaker.Settings{
		"primary": st, "fallback": st, "primary/other-model": st, "fallback/other-model": st,
	}, breaker.Options{Sent: map[breaker.SentModel]string{
		{Target: "primary", Model: "other-model"}:  "primary/other-model",
		{Target: "fallback", Model: "other-model"}: "fallback/other-model",
	}})
	defer set.Close()
	serves := func(_ int, req *providers.Request) providers.Step {
		if req.Model == "other-model" {
			return providers.Step{Status: 404} // not served at this provider
		}
		return providers.Step{Output: validTriage}
	}
	b := setupRace(t, race.Route{}, set, nil, provSpec{name: "primary", respond: serves}, provSpec{name: "fallback", respond: serves})
	in := chat.Input{Model: "other-model", Messages: []providers.Message{{Role: "user", Content: "hi"}}}
	input, _ := json.Marshal(in)
	op := chat.Operation("default")
	for i := range 3 {
		fp, _ := store.Fingerprint(op, "", "default", input)
		nj := store.NewJob{Owner: "tenant-a", Operation: op, IdempotencyKey: fmt.Sprintf("alias%d", i), Fingerprint: fp, Route: "default",
			Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second}
		plan, routing, ok, err := b.Runner.Plan(&store.Job{Operation: op, Route: "default", Input: input})
		if err != nil || !ok {
			t.Fatalf("plan %d: ok=%v err=%v routing %s", i, ok, err, routing)
		}
		nj.First = plan.First()
		job, _, err := b.Store.CreateJob(context.Background(), nj)
		if err != nil {
			t.Fatal(err)
		}
		b.Runner.SubmitNew(job, plan)
		b.waitSettled(t, job.ID)
	}
	states := map[string]string{}
	for _, s := range set.Snapshot() {
		states[s.Provider] = s.State
	}
	for _, target := range []string{"primary", "fallback"} {
		if states[target] != breaker.StateClosed {
			t.Errorf("breaker of target %s (its own model) is %s after tenant-a's requests for other-model", target, states[target])
		}
		if s := states[target+"/other-model"]; s != breaker.StateOpen {
			t.Errorf("breaker of %s/other-model is %s after 3 consecutive failures of other-model there, want open", target, s)
		}
	}
	// Tenant-b's ordinary job, on the targets' own models, is eligible.
	_, routing, ok, err := b.Runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default",
		Input: json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("tenant-b's ordinary job on the targets' own models has no eligible provider: %s", routing)
	}
	// Another request for other-model is refused by other-model's breakers,
	// and its routing names them.
	_, routing, ok, err = b.Runner.Plan(&store.Job{Operation: op, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatal("a request for other-model was planned although its breakers are open at every target")
	}
	if !strings.Contains(string(routing), "primary/other-model") || !strings.Contains(string(routing), "circuit breaker open") {
		t.Errorf("routing of a request for other-model does not name the open breaker of the model sent: %s", routing)
	}
}
