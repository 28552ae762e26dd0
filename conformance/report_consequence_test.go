package conformance_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// Under conformance.gate: all, a prompt without a suite leaves no target
// eligible for any attempt (every job of it is refused), not merely none for
// failover, and the table and the command's last words say so.
func TestPromptWithoutSuiteUnderGateAllRefusesEveryAttempt(t *testing.T) {
	rep := &conformance.Report{Gate: conformance.GateAll, Unsuited: []string{"invoice@2"}}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	const want = "no target is eligible for any attempt on it, not even as a route's primary (conformance.gate: all): every job of it is refused"
	if out := b.String(); !strings.Contains(out, want) || strings.Contains(out, "failover") {
		t.Errorf("table:\n%s\nwant it to say %q", out, want)
	}
	if got := rep.Consequence(); !strings.Contains(got, "no target is eligible for any attempt on them") || strings.Contains(got, "failover") {
		t.Errorf("Consequence() = %q", got)
	}
	for _, gate := range []string{"", conformance.GateFallbacks} {
		rep.Gate = gate
		b.Reset()
		if err := rep.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "no provider can become eligible for failover on it") {
			t.Errorf("gate %q: table:\n%s", gate, out)
		}
	}
}

// A failed result that was not recorded withdraws nothing: the table's
// "N of M failed: those providers are not eligible…" counts only the
// failures the gate has; the unrecorded one is told apart.
func TestUnrecordedFailureIsNotCountedAsMakingProvidersIneligible(t *testing.T) {
	rep := &conformance.Report{Gate: conformance.GateFallbacks, Results: []conformance.Result{
		{Provider: "a", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Recorded: new(true)},
		{Provider: "b", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Recorded: new(false), RecordError: "disk full"},
	}}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1 of 2 failed: those providers are not eligible for failover", "1 of 2 not recorded"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "2 of 2 failed") {
		t.Errorf("table counts the unrecorded failure as withdrawing eligibility:\n%s", out)
	}
	// Only an unrecorded failure: no sentence says anyone is not eligible.
	rep.Results = rep.Results[1:]
	b.Reset()
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "not eligible") || !strings.Contains(out, "1 of 1 not recorded") {
		t.Errorf("table:\n%s", out)
	}
}
