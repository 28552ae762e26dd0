package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A fallback nobody has run the suite on yet — every fallback of a new
// deployment, under the default gate — was refused with only "no passing
// conformance run for triage@2", the one refusal that did not say which
// command admits the target: the operator of a new deployment, whose jobs
// never failed over, learnt neither why it mattered nor what to run. Found in
// a newcomer's walkthrough.
func TestGateNeverRunSaysHowToFixIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	e.add("fallback", oracle(e.answers, nil))
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0))
	e.startRunner(t, gate)
	triage, _ := e.prompts.Get("triage", "")
	const command = "`router conformance run --provider fallback --prompt triage`"
	for _, role := range []string{store.RoleFailover, store.RoleHedge} {
		if ok, why := gate.Allow(ctx, "fallback", triage, role); ok || !strings.Contains(why, command) {
			t.Errorf("%s: admitted %v, reason %q; want a refusal saying to run %s", role, ok, why, command)
		}
	}
	j := e.job(t)
	if j.State != store.JobFailed || attemptsBy(j, "fallback") != 0 {
		t.Fatalf("job %s ended %s with attempts %+v, want failed without trying the fallback", j.ID, j.State, j.Attempts)
	}
	if !strings.Contains(string(j.Routing), command) {
		t.Errorf("the job's routing %s does not say to run %s", j.Routing, command)
	}
}
