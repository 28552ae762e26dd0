package config

import (
	"strings"
	"testing"
	"time"
)

// A hedge that can never start is refused at load, like a fixed hedge_after
// past the primary's first-byte deadline: a hedge_after at or past the
// route's deadline (the job is stopped first), an explicit hedge_after on a
// route with max_inflight 1 (a hedge is a second attempt in flight), and an
// adaptive hedge whose hedge_max (its delay before any history) is at or
// past the deadline. Found by review.
func TestHedgeThatCanNeverStartRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", model: m}
  - {name: b, type: openai, base_url: "http://127.0.0.1:2/v1", model: m}
routes:
`
	for _, c := range []struct{ route, want string }{
		{"  default: {providers: [a, b], hedge_after: 20s, deadline: 15s}",
			"routes.default.hedge_after (20s) is not below the route's deadline (15s): the job is stopped first, so the hedge would never start; set hedge_after below it"},
		{"  default: {providers: [a, b], hedge_after: 5s, max_inflight: 1}",
			"routes.default.hedge_after is 5s, but max_inflight is 1: a hedge is a second attempt in flight, so it would never start; max_inflight must be at least 2 for a hedge"},
		{"  default: {providers: [a, b], hedge_after: adaptive, max_inflight: 1}", "max_inflight must be at least 2 for a hedge"},
		{"  default: {providers: [a, b], hedge_after: 1s, max_attempts: 1}",
			"routes.default.hedge_after is 1s, but max_attempts is 1: a hedge is a second attempt, so it would never start"},
		{"  default: {providers: [a, b], hedge_after: 1s, hedge_budget: {percent: 0, min_concurrent: 0}}",
			"routes.default.hedge_after is 1s, but hedge_budget allows no hedge in flight (percent 0, min_concurrent 0)"},
		{"  default: {providers: [a, b], hedge_max: 10s, deadline: 5s}",
			"routes.default.hedge_max (10s) is not below the route's deadline (5s)"},
		// hedge_max left out is derived from the deadline: the refusal says so.
		{"  default: {providers: [a, b], hedge_min: 5s, deadline: 4s}",
			"left out, hedge_max is 10s, at most ¾ of the route's deadline 4s): lower hedge_min or set hedge_max"},
	} {
		_, err := Parse([]byte(base + c.route + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %q, got %v", strings.TrimSpace(c.route), c.want, err)
		}
	}
	for _, route := range []string{
		"  default: {providers: [a, b], hedge_after: 5s, deadline: 15s}",
		"  default: {providers: [a, b], max_inflight: 1}", // hedging by default: none with one in flight
		"  default: {providers: [a, b], hedge_after: \"off\", max_inflight: 1}",
		"  default: {providers: [a, b], deadline: 5s}",
		// one try, on whichever target is eligible: no hedge asked for
		"  default: {providers: [a, b], max_attempts: 1}",
		"  default: {providers: [a, b], hedge_budget: {percent: 0, min_concurrent: 0}}",
	} {
		if _, err := Parse([]byte(base + route + "\n")); err != nil {
			t.Errorf("%s refused: %v", strings.TrimSpace(route), err)
		}
	}
}

// Left out, hedge_max is 10s but at most ¾ of the route's deadline (and
// hedge_min at most that): with deadline 5s the adaptive hedge, which waits
// hedge_max before a target has history, used to wait 10s and never start.
func TestAdaptiveHedgeDefaultsFitAShortDeadline(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: a, type: scripted}
  - {name: b, type: scripted}
routes:
  short: {providers: [a, b], deadline: 2s}
  long: {providers: [a, b]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Routes["short"]; r.HedgeMax.D() != 1500*time.Millisecond || r.HedgeMin.D() != 1500*time.Millisecond {
		t.Errorf("deadline 2s: hedge_min %s, hedge_max %s; want 1.5s, 1.5s", r.HedgeMin.D(), r.HedgeMax.D())
	}
	if r := c.Routes["long"]; r.HedgeMax.D() != 10*time.Second || r.HedgeMin.D() != 2*time.Second {
		t.Errorf("deadline 2m: hedge_min %s, hedge_max %s; want 2s, 10s", r.HedgeMin.D(), r.HedgeMax.D())
	}
}
