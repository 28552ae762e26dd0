package config

import (
	"strings"
	"testing"
)

// A route with max_inflight 1 or max_attempts 1 never hedges: a hedge is a
// second call in flight and a second attempt. Its written hedge_min,
// hedge_max and hedge_budget change nothing and are refused, as they are on a
// route with hedge_after: off (found in review: they were accepted, and an
// operator who wrote a budget believed hedging was capped).
func TestHedgeSettingsOnARouteThatCannotHedgeRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", model: m, timeout: 20s, first_byte_timeout: 5s}
  - {name: b, type: openai, base_url: "http://127.0.0.1:2/v1", model: m}
routes:
`
	for _, c := range []struct{ route, want string }{
		{"  r: {providers: [a, b], hedge_min: 1s, hedge_max: 3s, max_inflight: 1}", "routes.r.hedge_min (1s) has no effect: it bounds the adaptive hedge delay, and max_inflight is 1 (a hedge is a second call in flight: the route never hedges); remove hedge_min, or raise max_inflight"},
		{"  r: {providers: [a, b], hedge_budget: {min_concurrent: 5}, max_attempts: 1}", "routes.r.hedge_budget has no effect: it bounds the calls a job has in flight beside its first, and max_attempts is 1 (a hedge is a second attempt: the route never hedges), so a job never has more than one; remove hedge_budget, or raise max_attempts"},
		{"  r: {providers: [a, b], hedge_budget: {percent: 20}, max_inflight: 1}", "routes.r.hedge_budget has no effect"},
		{"  r: {providers: [a, b], hedge_after: 2s, hedge_budget: {percent: 20}, max_inflight: 1}", "routes.r.hedge_budget has no effect"},
	} {
		_, err := Parse([]byte(base + c.route + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.route, err, c.want)
		}
	}
	for _, ok := range []string{
		"  r: {providers: [a, b], max_inflight: 1}", // the defaults are never refused
		"  r: {providers: [a, b], max_attempts: 1}",
		"  r: {providers: [a, b], hedge_budget: {percent: 20}, max_inflight: 3}",
	} {
		if _, err := Parse([]byte(base + ok + "\n")); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
