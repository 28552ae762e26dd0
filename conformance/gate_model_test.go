package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A pass is the model's that ran it: a target whose provider now serves
// another model (the configuration changed; the target's id, the provider's
// name, did not) is not admitted on the old model's pass, and is again once
// its new model passes (SPEC §15: results are per provider × model). Found by
// review.
func TestGatePassIsTheModelsThatRanIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("fallback", oracle(e.answers, nil))
	e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	triage, _ := e.prompts.Get("triage", "")
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, why := gate.Allow(ctx, "fallback", triage, store.RoleFailover); !ok {
		t.Fatalf("after a pass: %s", why)
	}
	tested := e.targets["fallback"].Model
	e.targets["fallback"].Model = "untested-model"
	if ok, _ := gate.Allow(ctx, "fallback", triage, store.RoleFailover); ok {
		t.Fatalf("target fallback, now serving untested-model, admitted on the pass of %s", tested)
	}
	e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	if ok, why := gate.Allow(ctx, "fallback", triage, store.RoleFailover); !ok {
		t.Fatalf("after its new model passed: %s", why)
	}
}
