package ops

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A job that failed before any attempt is explained by its routing decisions
// (the router's own reasons), and one whose reason the page cannot show
// without its error text points to `router jobs get`; neither shows the
// error text, which can quote tenants' data.
func TestFailureSummaryWithoutAttempts(t *testing.T) {
	secret := "input value Jane Doe"
	routing, _ := json.Marshal([]map[string]any{
		{"provider": "primary", "eligible": false, "reason": "circuit breaker open after 5 consecutive failures; probing again in 12s"},
		{"provider": "fallback", "eligible": true},
		{"provider": "fallback", "event": "hedge_denied", "eligible": true, "reason": "hedge budget"},
	})
	j := &store.Job{ID: "j1", Error: &secret, Routing: routing}
	got := failureSummary(j, nil)
	if want := "no eligible target: primary: circuit breaker open after 5 consecutive failures; probing again in 12s"; got != want {
		t.Errorf("from routing: %q, want %q", got, want)
	}
	j.Routing = nil
	got = failureSummary(j, nil)
	if strings.Contains(got, "Jane") || !strings.Contains(got, "router jobs get j1") {
		t.Errorf("without routing: %q, want a pointer to `router jobs get j1` and no error text", got)
	}
	if got := failureSummary(&store.Job{ID: "j2"}, nil); got != "" {
		t.Errorf("a job without an error: %q, want nothing", got)
	}
}

// An attempt's failure is its error's kind and status, or the first contract
// rule its output broke and where — never the message, which quotes values.
func TestAttemptWhy(t *testing.T) {
	for _, c := range []struct {
		a    store.Attempt
		want string
	}{
		{store.Attempt{State: store.AttemptInvalid, ValidationErrors: json.RawMessage(`[{"rule":"enum","path":"/category","message":"\"Jane\" is not one of"},{"rule":"range","path":"/n","message":"5"}]`)},
			"output breaks the contract: enum at /category (+1 more)"},
		{store.Attempt{State: store.AttemptInvalid}, "output breaks the contract"},
		{store.Attempt{State: store.AttemptFailed, Error: json.RawMessage(`{"kind":"unavailable","status":503,"message":"provider said Jane"}`)}, "unavailable (HTTP 503)"},
		{store.Attempt{State: store.AttemptUnknown, Error: json.RawMessage(`{"kind":"timeout","message":"no byte"}`)}, "timeout"},
		{store.Attempt{State: store.AttemptUnknown}, "unknown"},
		{store.Attempt{State: store.AttemptLost}, ""},
		{store.Attempt{State: store.AttemptCancelled, Error: json.RawMessage(`{"kind":"cancelled"}`)}, ""},
	} {
		if got := attemptWhy(&c.a); got != c.want {
			t.Errorf("%s %s %s: %q, want %q", c.a.State, c.a.Error, c.a.ValidationErrors, got, c.want)
		}
	}
}
