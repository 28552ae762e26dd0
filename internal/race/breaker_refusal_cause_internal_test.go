package race

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// refuseAll is a circuit breaker set whose every breaker is open.
type refuseAll struct{}

func (refuseAll) Admit(string) (func(Outcome), bool, string) {
	return nil, false, "circuit breaker is open"
}

// A target already used in a resumed round whose breaker refuses its retry
// is not among breakerRefused (which names targets not yet used): the
// routing of a plan no target admitted (refusedRouting) turned it ineligible
// with no cause, although every ineligible decision carries one (next_step's
// GatedTargets then fell back to reading its reason's words).
func TestRefusedRoutingGivesAUsedTargetsBreakerRefusalItsCause(t *testing.T) {
	o := &orchestrator{
		r:   &Runner{cfg: Config{Admission: refuseAll{}}},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		decisions: []Decision{
			{Provider: "primary", Eligible: true},
			{Provider: "fallback", Eligible: true},
			{Provider: "gone", Reason: "provider is not configured", Cause: CauseNotConfigured},
		},
		candidates:     []string{"primary", "fallback"},
		used:           map[string]bool{"primary": true},
		reasons:        map[string]string{"primary": "primary: upstream 500"},
		retries:        map[string]int{},
		breakerRefused: map[string]string{},
		breakerNoted:   map[string]bool{},
		routing:        json.RawMessage(`[]`), // not recorded yet: nothing is written to a store
	}
	if _, _, _, ok := o.choose(context.Background(), "primary", store.RoleRetry); ok {
		t.Fatal("an open breaker admitted an attempt")
	}
	var decisions []Decision
	if err := json.Unmarshal(o.refusedRouting(), &decisions); err != nil {
		t.Fatal(err)
	}
	if len(decisions) != 3 {
		t.Fatalf("routing %+v: want the three decisions of the plan", decisions)
	}
	for _, d := range decisions {
		if d.Eligible {
			t.Errorf("%s: eligible in the routing of a plan no target admitted: %+v", d.Provider, d)
			continue
		}
		want := CauseBreaker
		if d.Provider == "gone" {
			want = CauseNotConfigured
		}
		if d.Cause != want {
			t.Errorf("%s: ineligible with cause %q (reason %q), want %q", d.Provider, d.Cause, d.Reason, want)
		}
		if d.Cause == CauseBreaker && (!strings.HasSuffix(d.Reason, "circuit breaker is open") || strings.HasPrefix(d.Reason, d.Provider+":")) {
			t.Errorf("%s: reason %q, want the breaker's refusal, not naming the target", d.Provider, d.Reason)
		}
	}
}
