package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A chat completion that names a model of a route's `models` sends that model
// to every target (docs/chat.md), so the gate of a route with a
// conformance_prompt judges that model: a fallback whose configured model
// passed is not admitted for a model that never ran the suite (SPEC §9, §15:
// results are per provider × model), and the routing reason names the model.
// Found by review.
func TestChatAliasModelNeedsItsOwnPass(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	e.add("fallback", oracle(e.answers, nil))
	e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})

	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	e.startRunnerOn(t, gate, "triage") // primary, fallback

	chatJob := func(key, model string) *store.Job {
		t.Helper()
		// What the API stores for {"model": "alias-model", ...} when alias-model
		// is in routes.default.models (internal/api/chat.go); "" for the route's
		// own name.
		input, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": "Say hello."}}})
		op := chat.Operation("default")
		fp, _ := store.Fingerprint(op, "", "default", input)
		job, created, err := e.st.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: op, IdempotencyKey: key,
			Fingerprint: fp, Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second})
		if err != nil || !created {
			t.Fatalf("create job: %v %v", err, created)
		}
		return e.settle(t, job)
	}

	j := chatJob("chat-alias", "alias-model")
	for _, a := range j.Attempts {
		if a.Provider == "fallback" {
			t.Errorf("fallback took a %s attempt asking for model %q (state %s); its only conformance pass is of model %q",
				a.Role, a.Model, a.State, e.targets["fallback"].Model)
		}
	}
	var routing []race.Decision
	if err := json.Unmarshal(j.Routing, &routing); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	named := false
	for _, d := range routing {
		named = named || d.Provider == "fallback" && !d.Eligible && strings.Contains(d.Reason, "with model alias-model")
	}
	if !named {
		t.Errorf("no routing decision refuses fallback naming model alias-model: %s", j.Routing)
	}
	if ok, why := gate.AllowModel(ctx, "fallback", "alias-model", mustPrompt(t, e, "triage"), store.RoleFailover); ok ||
		why != "no passing conformance run for triage@3 with model alias-model, which this job asks for "+
			"(a pass counts only for the model it ran with: run `router conformance run --provider fallback --prompt triage`, which also tests the models of the route's `models`)" {
		t.Errorf("gate on the alias model: %v %q", ok, why)
	}

	// The route's own name sends the target's model, which passed.
	if j := chatJob("chat-route", ""); attemptsBy(j, "fallback") == 0 || winner(j) != "fallback" {
		t.Errorf("a chat job naming the route did not fail over to fallback, whose model passed: %s, attempts %+v", j.State, j.Attempts)
	}
}
