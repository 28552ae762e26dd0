package conformance_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// What a failing run means for routing depends on conformance.gate: with the
// gate off nothing keeps a failing provider out, and the report must not say
// it is "not eligible for failover or hedging". Found by review.
func TestReportSaysWhatFailingMeansUnderTheGate(t *testing.T) {
	results := []conformance.Result{
		{Provider: "good", Model: "m", Prompt: "triage", PromptVersion: "2", Passed: true, CasesTotal: 1, CasesPassed: 1},
		{Provider: "bad", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1},
	}
	for _, c := range []struct {
		gate        string
		table, last string
	}{
		{"", "1 of 2 failed: those providers are not eligible for failover or hedging on those prompt versions\n",
			"the providers marked FAIL are not eligible for failover or hedging on those prompt versions until a run passes"},
		{conformance.GateFallbacks, "1 of 2 failed: those providers are not eligible for failover or hedging on those prompt versions\n",
			"the providers marked FAIL are not eligible for failover or hedging on those prompt versions until a run passes"},
		{conformance.GateAll, "1 of 2 failed: those providers are not eligible for any attempt on those prompt versions, not even as a route's primary (conformance.gate: all)\n",
			"the providers marked FAIL are not eligible for any attempt on those prompt versions until a run passes, not even as a route's primary (conformance.gate: all)"},
		{conformance.GateOff, "1 of 2 failed: conformance.gate is off, so routing does not use these results: those providers still take failover and hedge traffic (set conformance.gate to fallbacks to keep them out)\n",
			"conformance.gate is off, so routing does not use these results: the providers marked FAIL still take failover and hedge traffic (set conformance.gate to fallbacks to keep them out)"},
	} {
		rep := &conformance.Report{Gate: c.gate, Results: results}
		var b bytes.Buffer
		if err := rep.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(b.String(), c.table) {
			t.Errorf("gate %q: table ends\n%s\nwant it to end %q", c.gate, b.String(), c.table)
		}
		if got := rep.Consequence(); got != c.last {
			t.Errorf("gate %q: Consequence() = %q, want %q", c.gate, got, c.last)
		}
	}

	// A prompt without a suite, with the gate off.
	rep := &conformance.Report{Gate: conformance.GateOff, Unsuited: []string{"invoice@2"}}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "eligible for failover") || !strings.Contains(out, "were conformance.gate turned on") {
		t.Errorf("gate off, prompt without a suite:\n%s", out)
	}
	if got := rep.Consequence(); strings.Contains(got, "eligible") {
		t.Errorf("gate off, prompt without a suite: Consequence() = %q", got)
	}
}

// Run copies the configured gate into the report.
func TestRunReportsTheGate(t *testing.T) {
	e := newEnv(t)
	e.add("fallback", oracle(e.answers, nil))
	rep := e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}, Gate: conformance.GateOff})
	if rep.Gate != conformance.GateOff {
		t.Fatalf("report gate %q, want off", rep.Gate)
	}
}
