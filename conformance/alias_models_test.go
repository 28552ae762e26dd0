package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A chat completion naming a model of a route's `models` sends that model to
// every target of the route, and on a route with a conformance_prompt the gate
// admits a fallback only with a pass of that model (TestChatAliasModelNeedsItsOwnPass).
// `router conformance run` therefore runs the route's prompt on each of its
// targets with each alias too, recorded for the target and the alias: after
// it, the gate admits the fallback for a chat job asking for the alias.
func TestRunTestsChatRouteAliases(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	e.add("fallback", oracle(e.answers, nil))
	routes := []conformance.ChatRoute{{Name: "default", Targets: []string{"primary", "fallback"}, Prompt: "triage", Models: []string{"alias-model"}}}

	// --provider fallback --prompt triage: the selected target runs the alias too.
	rep := e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}, ChatRoutes: routes})
	if got := runsOf(rep); got != "fallback/fallback-model/triage:pass fallback/alias-model/triage:pass" {
		t.Fatalf("results %s; want fallback's own model and the alias, both passing", got)
	}
	cases := len(e.suites["triage"].Cases)
	if n := requestsFor(e, "fallback", "alias-model"); n != cases {
		t.Errorf("fallback got %d requests asking for alias-model, want %d (one per case)", n, cases)
	}
	var n int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs
		WHERE provider = 'fallback' AND model = 'alias-model' AND prompt = 'triage' AND passed`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d passing runs of fallback with alias-model recorded (%v), want 1", n, err)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "fallback  alias-model     triage@3") {
		t.Errorf("the table does not show the alias's row with its model:\n%s", table.String())
	}

	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, why := gate.AllowModel(ctx, "fallback", "alias-model", mustPrompt(t, e, "triage"), store.RoleFailover); !ok {
		t.Fatalf("gate refuses fallback for alias-model after the run: %s", why)
	}
	j := chatAliasJob(t, e, gate, "alias-model")
	if winner(j) != "fallback" {
		t.Fatalf("a chat job asking for alias-model did not fail over to fallback: %s, attempts %+v, routing %s", j.State, j.Attempts, j.Routing)
	}
	for _, a := range j.Attempts {
		if a.Provider == "fallback" && a.Model != "alias-model" {
			t.Errorf("fallback's attempt asked for %q, want alias-model", a.Model)
		}
	}
}

// The aliases run only on the route's targets that are selected, only for the
// route's prompt when it is selected, once per target and model: an alias
// that is a target's own model is not run again.
func TestAliasRunsFollowTheSelection(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "other"} {
		e.add(n, oracle(e.answers, nil))
	}
	routes := []conformance.ChatRoute{
		{Name: "chat", Targets: []string{"a", "b"}, Prompt: "triage", Models: []string{"m1", "a-model"}},
		{Name: "chat2", Targets: []string{"b"}, Prompt: "triage", Models: []string{"m1"}}, // the same run again
	}
	var total int
	rep := e.run(t, conformance.Options{ChatRoutes: routes, Progress: func(p conformance.Progress) { total = p.Total }})
	want := "a/a-model/invoice:pass a/a-model/triage:pass a/m1/triage:pass " +
		"b/b-model/invoice:pass b/b-model/triage:pass b/m1/triage:pass b/a-model/triage:pass " +
		"other/other-model/invoice:pass other/other-model/triage:pass"
	if got := runsOf(rep); got != want {
		t.Fatalf("results\n %s\nwant\n %s", got, want)
	}
	if cases := 6*len(e.suites["triage"].Cases) + 3*len(e.suites["invoice"].Cases); total != cases {
		t.Errorf("progress total %d, want %d", total, cases)
	}
	if got := runsOf(e.run(t, conformance.Options{PromptNames: []string{"invoice"}, ChatRoutes: routes})); got !=
		"a/a-model/invoice:pass b/b-model/invoice:pass other/other-model/invoice:pass" {
		t.Errorf("--prompt invoice ran %s; the routes' prompt is triage", got)
	}
	if got := runsOf(e.run(t, conformance.Options{Providers: []string{"other"}, ChatRoutes: routes})); got !=
		"other/other-model/invoice:pass other/other-model/triage:pass" {
		t.Errorf("--provider other ran %s; other is on no route with aliases", got)
	}
	_, err := conformance.Run(context.Background(), conformance.Options{Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		ChatRoutes: []conformance.ChatRoute{{Name: "chat", Targets: []string{"a"}, Prompt: "nope", Models: []string{"m1"}}}})
	if err == nil || !strings.Contains(err.Error(), "route chat: conformance_prompt") {
		t.Errorf("a route naming a prompt that is not loaded: %v", err)
	}
}

// runsOf is the report's results as provider/model/prompt:pass|FAIL, in order.
func runsOf(rep *conformance.Report) string {
	var out []string
	for _, r := range rep.Results {
		verdict := "pass"
		if !r.Passed {
			verdict = "FAIL"
		}
		out = append(out, fmt.Sprintf("%s/%s/%s:%s", r.Provider, r.Model, r.Prompt, verdict))
	}
	return strings.Join(out, " ")
}

func requestsFor(e *env, provider, model string) int {
	n := 0
	for _, r := range e.scripted[provider].Requests() {
		if r.Model == model {
			n++
		}
	}
	return n
}

// chatAliasJob runs, on a route "default" over every provider added with
// conformance_prompt triage, a chat completion asking for model (as
// TestChatAliasModelNeedsItsOwnPass does) and returns the settled job.
func chatAliasJob(t *testing.T, e *env, gate race.Gate, model string) *store.Job {
	t.Helper()
	e.startRunnerOn(t, gate, "triage")
	input, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": "Say hello."}}})
	op := chat.Operation("default")
	fp, _ := store.Fingerprint(op, "", "default", input)
	job, created, err := e.st.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: op, IdempotencyKey: "chat-" + model,
		Fingerprint: fp, Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second})
	if err != nil || !created {
		t.Fatalf("create job: %v %v", err, created)
	}
	return e.settle(t, job)
}

// A chat job on a route with conformance_prompt that names no alias sends the
// target's own model; when the prompt names a model of its own, the prompt's
// run tests that one, so the run tests the target's model as well — else the
// gate would refuse that route's fallbacks for every chat job.
func TestRunTestsTheTargetsOwnModelForAPromptWithAModel(t *testing.T) {
	e := newEnv(t)
	e.add("a", oracle(e.answers, nil))
	p, err := e.prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	p.Model = "prompt-model"
	rep := e.run(t, conformance.Options{PromptNames: []string{"triage"},
		ChatRoutes: []conformance.ChatRoute{{Name: "chat", Targets: []string{"a"}, Prompt: "triage"}}})
	if got, want := runsOf(rep), "a/prompt-model/triage:pass a/a-model/triage:pass"; got != want {
		t.Fatalf("results %s, want %s", got, want)
	}
}
