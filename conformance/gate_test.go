package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// Acceptance 2: a fallback with no result, or only a stale or older-version
// one, is refused by the gate with a reason and not used for failover; after a
// passing run it is.
func TestGateNeedsFreshPassOfExactVersion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	fb := e.add("fallback", oracle(e.answers, nil))
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0))
	e.startRunner(t, gate)
	triage, _ := e.prompts.Get("triage", "")
	allow := func(provider, role string) (bool, string) { return gate.Allow(ctx, provider, triage, role) }
	expectRefusedAtRunTime := func(why string) {
		t.Helper()
		j := e.job(t)
		if j.State != store.JobFailed || attemptsBy(j, "fallback") != 0 {
			t.Fatalf("%s: job %s ended %s with attempts %+v", why, j.ID, j.State, j.Attempts)
		}
	}

	// No result at all.
	if ok, why := allow("fallback", store.RoleFailover); ok || why != "no passing conformance run for triage@3 (run `router conformance run --provider fallback --prompt triage`)" {
		t.Fatalf("no result: %v %q", ok, why)
	}
	for _, role := range []string{store.RoleHedge, store.RoleRetry} {
		if ok, _ := allow("fallback", role); ok {
			t.Fatalf("no result: role %s allowed", role)
		}
	}
	// The primary role is not gated in fallbacks mode.
	if ok, why := allow("fallback", store.RolePrimary); !ok {
		t.Fatalf("primary refused in fallbacks mode: %s", why)
	}
	expectRefusedAtRunTime("no result")

	// Only a pass of an older version.
	record := func(version string, passed bool) {
		t.Helper()
		r := store.NewConformanceRun{Provider: "fallback", Model: "fallback-model", Prompt: "triage", PromptVersion: version,
			Passed: passed, CasesTotal: 10, CasesPassed: 10, Duration: time.Second,
			PromptDigest: mustPrompt(t, e, "triage").Digest, TargetDigest: testTargetDigests("fallback", "", true)}
		if !passed {
			r.CasesPassed = 9
		}
		if _, err := e.st.RecordConformanceRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	record("0", true)
	if ok, why := allow("fallback", store.RoleFailover); ok ||
		why != "no passing conformance run for triage@3 (it passed version 0; a new prompt version needs a new run: "+
			"`router conformance run --provider fallback --prompt triage`)" {
		t.Fatalf("older version: %v %q", ok, why)
	}
	expectRefusedAtRunTime("older version")

	// A pass of this version that is 9 days old on the database clock.
	record("3", true)
	if _, err := e.db.Pool.Exec(ctx, `UPDATE conformance_runs SET started_at = now() - interval '9 days 1 minute',
		finished_at = now() - interval '9 days' WHERE prompt_version = '3'`); err != nil {
		t.Fatal(err)
	}
	want := "last pass is 9 days old (conformance.max_age is 7 days; run `router conformance run --provider fallback --prompt triage`)"
	if ok, why := allow("fallback", store.RoleFailover); ok || why != want {
		t.Fatalf("stale: %v %q", ok, why)
	}
	expectRefusedAtRunTime("stale")

	// A passing run through the runner: now it takes failover traffic.
	rep := e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	if !rep.Passed {
		t.Fatalf("the run failed: %+v", rep.Results)
	}
	if ok, why := allow("fallback", store.RoleFailover); !ok {
		t.Fatalf("after a passing run: refused: %s", why)
	}
	calls := fb.Calls()
	j := e.job(t)
	if j.State != store.JobSucceeded || winner(j) != "fallback" || fb.Calls() != calls+1 {
		t.Fatalf("after a passing run: job %s ended %s won by %q", j.ID, j.State, winner(j))
	}
	// The pass is for triage@3 only: invoice@3 is still refused.
	invoice, _ := e.prompts.Get("invoice", "")
	if ok, _ := gate.Allow(ctx, "fallback", invoice, store.RoleFailover); ok {
		t.Fatal("a triage pass made the provider eligible for invoice")
	}

	// A later failing run withdraws the pass.
	record("3", false)
	if ok, why := allow("fallback", store.RoleFailover); ok || why != "last conformance run for triage@3 failed (9 of 10 cases passed)" {
		t.Fatalf("failed after pass: %v %q", ok, why)
	}
}

func TestGateModes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage, _ := e.prompts.Get("triage", "")
	all := conformance.NewGate(e.st, conformance.GateAll, time.Hour, conformance.CacheFor(0))
	if ok, why := all.Allow(ctx, "p", triage, store.RolePrimary); ok || why != "no passing conformance run for triage@3 (run `router conformance run --provider p --prompt triage`)" {
		t.Fatalf("all, primary: %v %q", ok, why)
	}
	off := conformance.NewGate(e.st, conformance.GateOff, time.Hour)
	if ok, _ := off.Allow(ctx, "p", triage, store.RoleFailover); !ok {
		t.Fatal("off refused")
	}
	if g := conformance.NewGate(e.st, "", time.Hour); g.Mode() != conformance.GateFallbacks {
		t.Fatalf("default mode %q", g.Mode())
	}
	if g := conformance.NewGate(e.st, "bogus", time.Hour); g.Mode() != conformance.GateAll {
		t.Fatalf("unknown mode is %q, want the strictest", g.Mode())
	}
	// No prompt: not gated.
	if ok, _ := all.Allow(ctx, "p", nil, store.RoleFailover); !ok {
		t.Fatal("a job without a prompt was gated")
	}
	// The database unreachable: refused (fail closed), with the reason.
	e.db.Pool.Close()
	if ok, why := all.Allow(ctx, "p", triage, store.RoleFailover); ok || why == "" {
		t.Fatalf("closed database: %v %q", ok, why)
	}
}

// The cache serves repeated decisions without the database, and Forget (or the
// cache period) brings in new runs.
func TestGateCache(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage, _ := e.prompts.Get("triage", "")
	g := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(time.Hour))
	if ok, _ := g.Allow(ctx, "p", triage, store.RoleFailover); ok {
		t.Fatal("allowed without a run")
	}
	if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "p", Prompt: "triage", PromptVersion: "3",
		Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: triage.Digest, TargetDigest: testTargetDigests("p", "", true)}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.Allow(ctx, "p", triage, store.RoleFailover); ok {
		t.Fatal("the cached refusal was not used")
	}
	g.Forget()
	if ok, why := g.Allow(ctx, "p", triage, store.RoleFailover); !ok {
		t.Fatalf("after Forget: %s", why)
	}
}

func TestHumanAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		9*24*time.Hour + 3*time.Hour: "9 days", 168 * time.Hour: "7 days", 47 * time.Hour: "47 hours",
		2 * time.Hour: "2 hours", 90 * time.Minute: "90 minutes", 61 * time.Second: "61 seconds", time.Second: "1 second",
	} {
		if got := conformance.HumanAge(d); got != want {
			t.Errorf("HumanAge(%v) = %q, want %q", d, got, want)
		}
	}
}
