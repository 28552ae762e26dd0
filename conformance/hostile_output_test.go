package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A provider that regresses with a reply PostgreSQL's jsonb cannot hold (a NUL
// character, as a model can emit through the escape \u0000) still gets its
// failing run recorded: otherwise its earlier pass would keep it eligible for
// failover.
func TestFailingRunWithUnstorableReplyIsRecorded(t *testing.T) {
	e := newEnv(t)
	nul := false
	e.add("flaky", func(i int, req *providers.Request) providers.Step {
		step := oracle(e.answers, nil)(i, req)
		if nul {
			step.Output = "\x00" + step.Output + "\x00 \xff" + string(make([]byte, 3000))
		}
		return step
	})
	rep := e.run(t, conformance.Options{Providers: []string{"flaky"}, PromptNames: []string{"triage"}})
	if r := result(t, rep, "flaky", "triage"); !r.Passed || r.RunID == 0 {
		t.Fatalf("first run: %+v", r)
	}
	p, _ := e.prompts.Get("triage", "")
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0))
	if ok, why := gate.Allow(context.Background(), "flaky", p, store.RoleFailover); !ok {
		t.Fatalf("gate after the pass: %s", why)
	}

	nul = true
	rep, err := conformance.Run(context.Background(), conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts,
		Suites: e.suites, Providers: []string{"flaky"}, PromptNames: []string{"triage"}, RouterVersion: "test"})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	r := result(t, rep, "flaky", "triage")
	if r.Passed || r.RunID == 0 || r.Cases[0].Stage != conformance.StageContract || r.Cases[0].Failures[0].Rule != "json.syntax" {
		t.Fatalf("second run: passed=%v run=%d case %+v", r.Passed, r.RunID, r.Cases[0])
	}
	if ok, why := gate.Allow(context.Background(), "flaky", p, store.RoleFailover); ok ||
		why != "last conformance run for triage@3 failed (0 of 10 cases passed)" {
		t.Fatalf("gate after the failing run: %v %q", ok, why)
	}
}
