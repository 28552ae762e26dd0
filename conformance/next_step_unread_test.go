package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The fallback has a fresh pass, but when the primary fails the gate cannot
// read conformance_runs (locked by a migration's ALTER TABLE / REINDEX /
// VACUUM FULL): it refuses, fails closed, as it should. The failed job's
// next_step (and a failed chat call's 502, race.GatedNote) then tells the
// caller that the fallback has "no fresh passing `router conformance run`",
// that "a retry now would be gated the same way", and to wait until "the
// router's operator has made them pass" — none of which is true: the pass is
// there, and a retry once the database answers is admitted. The 503 path
// already tells the two apart (internal/api noeligible.go: conformanceUnread,
// Retry-After 2 s).
func TestNextStepAfterAnUnreadableGate(t *testing.T) {
	e := newEnv(t)
	e.add("primary", failing)
	e.add("fallback", oracle(e.answers, nil))
	if rep := e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}}); !rep.Passed {
		t.Fatal("precondition: the fallback passes")
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }), conformance.TargetSettings(testTargetDigests))
	if ok, why := gate.Allow(context.Background(), "fallback", mustPrompt(t, e, "triage"), store.RoleFailover); !ok {
		t.Fatalf("precondition: the gate admits the fallback: %s", why)
	}
	conformance.WatchGateReads(gate, 200*time.Millisecond, func(int) {}) // the read the lock holds gives up soon
	lockRuns(t, e)
	e.startRunner(t, gate)
	j := e.job(t)
	if j.State != store.JobFailed || attemptsBy(j, "fallback") != 0 {
		t.Fatalf("set-up: job %s, attempts %+v; want failed without the fallback", j.State, j.Attempts)
	}
	gated := race.GatedTargets(j)
	if len(gated) != 1 || !strings.Contains(gated[0], "cannot read conformance results") {
		t.Fatalf("set-up: gated %q, want the fallback refused for a read that failed", gated)
	}
	step := race.NextStep(j)
	for _, wrong := range []string{"have no fresh passing", "would be gated the same way", "has made them pass"} {
		if strings.Contains(step, wrong) {
			t.Errorf("next_step says %q of a target whose pass the gate could not read:\n%s", wrong, step)
		}
	}
}
