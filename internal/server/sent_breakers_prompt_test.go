package server

import (
	"maps"
	"slices"
	"testing"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
)

// A prompt's `model` is sent in place of its target's own, as a route's
// `models` are: it gets a breaker per provider × model sent, named and set up
// the same way, on every route's targets (a job may name another route than
// its prompt's). A prompt model that is a target's own model makes none for
// that target, and one a route's `models` already names shares its breaker.
func TestBreakersPerPromptModelSent(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: a, type: scripted, model: m1, breaker: {consecutive_failures: 7}}
  - {name: b, type: scripted, model: m2}
routes:
  default:
    targets: [{provider: a}]
    models: [alias]
  other:
    targets: [{provider: b}]
`))
	if err != nil {
		t.Fatal(err)
	}
	prompts := []*prompt.Prompt{
		{Name: "own", Route: "default", Model: "m1"},     // target a's own model
		{Name: "plain", Route: "default"},                // no model: the target's
		{Name: "pm", Route: "default", Model: "pm"},      // a model of its own
		{Name: "shared", Route: "other", Model: "alias"}, // default's alias too
	}
	settings, sent, extra := breakerSettings(cfg, prompts...)
	wantSent := map[breaker.SentModel]string{
		{Target: "a", Model: "alias"}: "a/alias",
		{Target: "a", Model: "pm"}:    "a/pm",
		{Target: "b", Model: "pm"}:    "b/pm", // on route other, named by a job's "route"
		{Target: "b", Model: "m1"}:    "b/m1", // prompt own's model is not b's
		{Target: "b", Model: "alias"}: "b/alias",
	}
	if !maps.Equal(sent, wantSent) {
		t.Errorf("sent = %v, want %v", sent, wantSent)
	}
	if want := []string{"a/alias", "b/m1", "a/pm", "b/pm", "b/alias"}; !slices.Equal(extra, want) {
		t.Errorf("extra breakers %v, want %v (routes' models in route order, then prompts' in prompt order)", extra, want)
	}
	if _, ok := settings["a/m1"]; ok {
		t.Errorf("a breaker a/m1 was made for a prompt sending target a's own model: it is target a's")
	}
	if s := settings["a/pm"]; s.ConsecutiveFailures != 7 {
		t.Errorf("breaker a/pm has settings %+v, want provider a's (consecutive_failures 7)", s)
	}
	// A prompt without a model of its own adds nothing to the routes'.
	_, sent, extra = breakerSettings(cfg, prompts[1])
	if want := []string{"a/alias"}; !slices.Equal(extra, want) || len(sent) != 1 {
		t.Errorf("prompts without a model of their own made breakers: sent %v, extra %v", sent, extra)
	}
}
