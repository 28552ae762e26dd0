package server

import (
	"maps"
	"slices"
	"testing"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// The breakers of the models a route's `models` sends in place of a target's
// own are made at start, one per provider × model sent (SPEC §10, §15), from
// the configuration alone; a model sent that is a target's own model of the
// provider shares that target's breaker. Found by review (HIGH 1).
func TestBreakersPerModelSent(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: a, type: scripted, model: m1, breaker: {consecutive_failures: 7}}
  - {name: b, type: scripted, model: m2}
routes:
  default:
    targets:
      - {provider: a}
      - {provider: a, model: m3}
      - {provider: b}
    models: [m1, alias]
`))
	if err != nil {
		t.Fatal(err)
	}
	settings, sent, extra := breakerSettings(cfg)
	wantSent := map[breaker.SentModel]string{
		{Target: "a/m3", Model: "m1"}:    "a", // provider a's own model: target a's breaker
		{Target: "a", Model: "alias"}:    "a/alias",
		{Target: "a/m3", Model: "alias"}: "a/alias",
		{Target: "b", Model: "m1"}:       "b/m1",
		{Target: "b", Model: "alias"}:    "b/alias",
	}
	if !maps.Equal(sent, wantSent) {
		t.Errorf("sent = %v, want %v", sent, wantSent)
	}
	// The operator's stats count those attempts under the same breakers.
	if got, want := statsBreakers(sent), []store.SentBreaker{
		{Provider: "a", Model: "alias", Breaker: "a/alias"}, {Provider: "a/m3", Model: "alias", Breaker: "a/alias"},
		{Provider: "a/m3", Model: "m1", Breaker: "a"}, {Provider: "b", Model: "alias", Breaker: "b/alias"},
		{Provider: "b", Model: "m1", Breaker: "b/m1"},
	}; !slices.Equal(got, want) {
		t.Errorf("stats breakers %v, want %v", got, want)
	}
	if want := []string{"a/alias", "b/m1", "b/alias"}; !slices.Equal(extra, want) {
		t.Errorf("extra breakers %v, want %v", extra, want)
	}
	names := slices.Sorted(maps.Keys(settings))
	if want := []string{"a", "a/alias", "a/m3", "b", "b/alias", "b/m1"}; !slices.Equal(names, want) {
		t.Errorf("breakers %v, want %v", names, want)
	}
	if s := settings["a/alias"]; s.ConsecutiveFailures != 7 {
		t.Errorf("breaker a/alias has settings %+v, want provider a's (consecutive_failures 7)", s)
	}
	set := breaker.New(settings, breaker.Options{Sent: sent})
	defer set.Close()
	if got := set.BreakerOf("a/m3", "alias"); got != "a/alias" {
		t.Errorf("BreakerOf(a/m3, alias) = %q", got)
	}
	if got := set.BreakerOf("a", "not-configured"); got != "" {
		t.Errorf("BreakerOf(a, not-configured) = %q, want none (the target's breaker)", got)
	}
	if got := set.SentBreakers("a/m3"); !slices.Equal(got, []string{"a", "a/alias"}) {
		t.Errorf("SentBreakers(a/m3) = %v", got)
	}
}
