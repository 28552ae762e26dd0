package config

import (
	"strings"
	"testing"
	"time"
)

// hedge_max written below 2s, hedge_min left out, was refused with a message
// about a hedge_min (2s) the file never wrote, calling the written hedge_max
// "left out": the default hedge_min was capped by the default hedge_max only.
// Found by review.
func TestHedgeMaxAloneBelowDefaultHedgeMin(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte("providers: [{name: a, type: scripted}, {name: b, type: scripted}]\n" +
		"routes: {default: {providers: [a, b], hedge_max: 1s}}\n"))
	if err != nil {
		t.Fatalf("hedge_max: 1s alone refused: %v", err)
	}
	if r := c.Routes["default"]; r.HedgeMin > r.HedgeMax {
		t.Errorf("hedge_min %s above hedge_max %s", r.HedgeMin.D(), r.HedgeMax.D())
	} else if r.HedgeMin.D() != time.Second {
		t.Errorf("hedge_min %s with hedge_max 1s; want 1s (2s, at most hedge_max)", r.HedgeMin.D())
	}
	// A written hedge_max above 2s leaves the default hedge_min at 2s.
	c, err = Parse([]byte("providers: [{name: a, type: scripted}, {name: b, type: scripted}]\n" +
		"routes: {default: {providers: [a, b], hedge_max: 5s}}\n"))
	if err != nil || c.Routes["default"].HedgeMin.D() != 2*time.Second {
		t.Fatalf("hedge_max: 5s: %v; want hedge_min 2s", err)
	}
}

// Likewise execution.retry.cap written below 200ms, base left out: the base
// is at most the cap.
func TestRetryCapAloneBelowDefaultBase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte("execution: {retry: {cap: 100ms}}\n"))
	if err != nil {
		t.Fatalf("execution.retry.cap: 100ms alone refused: %v", err)
	}
	if r := c.Execution.Retry; r.Base.D() != 100*time.Millisecond || r.Cap.D() != 100*time.Millisecond {
		t.Errorf("retry base %s, cap %s; want 100ms, 100ms", r.Base.D(), r.Cap.D())
	}
	if c, err = Parse([]byte("execution: {retry: {cap: 1s}}\n")); err != nil || c.Execution.Retry.Base.D() != 200*time.Millisecond {
		t.Fatalf("execution.retry.cap: 1s: %v; want base 200ms", err)
	}
}

// A refusal of the hedge bounds blames what the file wrote: "left out" only
// of a hedge_max the file left out, and a bound written 0 or below by name.
func TestHedgeBoundMessagesBlameWhatWasWritten(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = "providers: [{name: a, type: scripted}, {name: b, type: scripted}]\nroutes:\n"
	for _, c := range []struct{ route, want, not string }{
		{"  default: {providers: [a, b], hedge_min: 3s, hedge_max: 2s}",
			"routes.default: hedge_min (3s) must be at most hedge_max (2s): lower hedge_min or raise hedge_max", "left out"},
		{"  default: {providers: [a, b], hedge_min: 5s, deadline: 4s}",
			"routes.default: hedge_min (5s) must be at most hedge_max (3s; left out, hedge_max is 10s, at most ¾ of the route's deadline 4s): lower hedge_min or set hedge_max", ""},
		{"  default: {providers: [a, b], hedge_max: 0s}",
			"routes.default.hedge_max (0s) must be a positive duration", "hedge_min (2s)"},
		{"  default: {providers: [a, b], hedge_max: -1s}",
			"routes.default.hedge_max (-1s) must be a positive duration", "hedge_min ("},
		{"  default: {providers: [a, b], hedge_min: 0s}",
			"routes.default.hedge_min (0s) must be a positive duration", "hedge_max ("},
		{"  default: {providers: [a, b], hedge_max: 10s, deadline: 5s}",
			"set hedge_max below it (or leave it out: it is then 10s, at most ¾ of deadline)", "left out"},
	} {
		_, err := Parse([]byte(base + c.route + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) || c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%s: %v; want %q (and not %q)", strings.TrimSpace(c.route), err, c.want, c.not)
		}
	}
}
