package config

import (
	"strings"
	"testing"
)

// Route hedge settings that change nothing were accepted: hedge_after on a
// route of one target (a hedge goes only to a target not yet used, so it
// never starts), hedge_min/hedge_max with a fixed hedge_after or with off
// (they bound the adaptive delay only), hedge_budget with hedge_after: off
// (without hedges no call is ever in flight beside another), and an adaptive
// hedge_min at or past the primary's first-byte deadline (the delay is then
// three quarters of that deadline, whatever hedge_min says; the fixed
// hedge_after equivalent was already refused). Each is refused now, naming
// the setting, why it does nothing and what to do. Found by review.
func TestHedgeSettingsWithoutEffectRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", model: m, timeout: 20s, first_byte_timeout: 5s}
  - {name: b, type: openai, base_url: "http://127.0.0.1:2/v1", model: m}
  - {name: s, type: scripted, model: m, timeout: 4s}
routes:
`
	for _, c := range []struct{ route, why string }{
		{"  r: {providers: [a], hedge_after: 2s}", "hedge_after on a route of one target"},
		{"  r: {providers: [a], hedge_after: adaptive}", "adaptive hedge_after on a route of one target"},
		{"  r: {providers: [a, b], hedge_after: 2s, hedge_min: 1s, hedge_max: 3s}", "hedge_min/hedge_max with a fixed hedge_after"},
		{"  r: {providers: [a, b], hedge_after: \"off\", hedge_max: 3s}", "hedge_max with hedge_after: off"},
		{"  r: {providers: [a, b], hedge_after: \"off\", hedge_budget: {percent: 20, min_concurrent: 5}}", "hedge_budget with hedge_after: off"},
		{"  r: {providers: [a, b], hedge_min: 6s, hedge_max: 8s}", "adaptive hedge_min at or past the primary's first_byte_timeout"},
	} {
		if _, err := Parse([]byte(base + c.route + "\n")); err == nil {
			t.Errorf("accepted (%s): %s", c.why, c.route)
		}
	}

	// Each message names the setting, says why it does nothing and what to do.
	for _, c := range []struct {
		route string
		wants []string
	}{
		{"  r: {providers: [a], hedge_after: 2s}", []string{
			"routes.r.hedge_after (2s) has no effect: the route has one target (a), and a hedge goes only to another target",
			"add a target to hedge to, or remove hedge_after"}},
		{"  r: {targets: [{provider: a}], hedge_after: adaptive}", []string{"routes.r.hedge_after (adaptive) has no effect: the route has one target (a)"}},
		{"  r: {providers: [a, b], hedge_after: 2s, hedge_min: 1s, hedge_max: 3s}", []string{
			"routes.r.hedge_min (1s) has no effect: it bounds the adaptive hedge delay, and hedge_after is a fixed 2s; remove hedge_min, or set hedge_after: adaptive",
			"routes.r.hedge_max (3s) has no effect: it bounds the adaptive hedge delay, and hedge_after is a fixed 2s; remove hedge_max"}},
		{"  r: {providers: [a, b], hedge_after: \"off\", hedge_max: 3s}", []string{
			"routes.r.hedge_max (3s) has no effect: it bounds the adaptive hedge delay, and hedge_after is off (no hedging); remove hedge_max, or set hedge_after: adaptive"}},
		{"  r: {providers: [a, b], hedge_after: \"off\", hedge_budget: {percent: 20, min_concurrent: 5}}", []string{
			"routes.r.hedge_budget has no effect: it bounds the calls a job has in flight beside its first, and hedge_after is off (no hedging), so a job never has more than one",
			"remove hedge_budget, or set hedge_after (adaptive or a duration)"}},
		{"  r: {providers: [a, b], hedge_after: \"off\", hedge_budget: {percent: 0}}", []string{"routes.r.hedge_budget has no effect"}},
		// Left out on a route of one target, hedge_after is off.
		{"  r: {providers: [a], hedge_min: 1s}", []string{
			"routes.r.hedge_min (1s) has no effect: it bounds the adaptive hedge delay, and hedge_after is off (left out on a route of one target, a hedge having no other target to go to); remove hedge_min"}},
		{"  r: {providers: [a], hedge_budget: {min_concurrent: 1}}", []string{
			"routes.r.hedge_budget has no effect: it bounds the calls a job has in flight beside its first, and hedge_after is off (left out on a route of one target"}},
		// Written with an adaptive hedge_after on one target: all at once.
		{"  r: {providers: [a], hedge_after: adaptive, hedge_max: 3s, hedge_budget: {percent: 5}}", []string{
			"routes.r.hedge_after (adaptive) has no effect",
			"routes.r.hedge_max (3s) has no effect: it bounds the adaptive hedge delay, and the route never hedges, having one target (a); remove hedge_max, or add a target to hedge to",
			"routes.r.hedge_budget has no effect: it bounds the calls a job has in flight beside its first, and the route never hedges, having one target (a), so a job never has more than one; remove hedge_budget, or add a target to hedge to"}},
		{"  r: {providers: [a, b], hedge_min: 6s, hedge_max: 8s}", []string{
			"routes.r.hedge_min (6s) is not below the primary's first_byte_timeout (5s, provider a): an adaptive delay at or past it is three quarters of that deadline instead (a primary still silent then becomes unknown, which blocks every new attempt), so hedge_min would never apply; set hedge_min below it, or leave it out"}},
		{"  r: {providers: [a, b], hedge_after: adaptive, hedge_min: 5s, hedge_max: 8s}", []string{"routes.r.hedge_min (5s) is not below the primary's first_byte_timeout (5s, provider a)"}},
		// A scripted primary keeps only its timeout, as for a fixed hedge_after.
		{"  r: {providers: [s, b], hedge_min: 4s, hedge_max: 4s}", []string{"routes.r.hedge_min (4s) is not below the primary's timeout (4s, provider s)"}},
	} {
		mustRefuse(t, base+c.route+"\n", c.wants...)
	}

	// What the file did not write is never refused, nor a setting that
	// takes effect.
	for _, route := range []string{
		"  r: {providers: [a]}",                                            // hedge_after off by default, bounds and budget defaulted
		"  r: {providers: [a], hedge_after: \"off\"}",                      // says what happens
		"  r: {providers: [a, b]}",                                         // adaptive by default
		"  r: {providers: [a, b], hedge_after: 2s}",                        // fixed: the default bounds are not written
		"  r: {providers: [a, b], hedge_after: \"off\"}",                   // off: the default budget is not written
		"  r: {providers: [a, b], hedge_after: \"off\", hedge_budget: {}}", // an empty budget writes nothing
		"  r: {providers: [a, b], hedge_min: 4s, hedge_max: 8s}",           // below the primary's first byte
		"  r: {providers: [a, b], hedge_after: adaptive, hedge_min: 1s, hedge_max: 3s, hedge_budget: {percent: 20}}",
		"  r: {providers: [a, b], hedge_after: 2s, hedge_budget: {percent: 20, min_concurrent: 5}}",
		// a short first-byte deadline: the default hedge_min (2s) is not written
		"  r: {providers: [s, b], deadline: 2s}",
		"  r: {targets: [{provider: a}, {provider: a, model: m2}], hedge_after: 2s}", // two targets on one provider
	} {
		if _, err := Parse([]byte(base + route + "\n")); err != nil {
			t.Errorf("%s refused: %v", strings.TrimSpace(route), err)
		}
	}
	// The primary's first_byte_timeout left out is min(30s, timeout/2): a
	// short timeout makes it shorter than the default hedge_min, never refused.
	const short = `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", model: m, timeout: 3s}
  - {name: b, type: openai, base_url: "http://127.0.0.1:2/v1", model: m}
routes:
  r: {providers: [a, b]}
`
	if _, err := Parse([]byte(short)); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}
