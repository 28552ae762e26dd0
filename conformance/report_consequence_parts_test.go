package conformance_test

import (
	"testing"

	"github.com/routerhq/router/conformance"
)

// The last line of `router conformance run` says each consequence present,
// as the table does, in one order: the failures, the prompts without a
// suite, the inconclusive and the exploratory results; under gate: all,
// "until a run passes" is said of the failures before the parenthesis.
func TestConsequenceSaysEveryConsequenceInOrder(t *testing.T) {
	rep := &conformance.Report{Gate: conformance.GateAll, Unsuited: []string{"invoice@2"}, Results: []conformance.Result{
		{Provider: "a", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Recorded: new(true)},
		{Provider: "b", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Inconclusive: true},
		{Provider: "c", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, CasesPassed: 1, Passed: true, Exploratory: true},
	}}
	want := "the providers marked FAIL are not eligible for any attempt on those prompt versions until a run passes, not even as a route's primary (conformance.gate: all)" +
		"; some prompts have no suite: no target is eligible for any attempt on them, not even as a route's primary (conformance.gate: all), so every job of them is refused" +
		"; some results are inconclusive: only transient provider errors (rate limits, unavailable or overloaded, a refused or reset connection); not recorded, so the gate still judges those providers by their previous runs: rerun `router conformance run --provider b --prompt triage` once the provider recovers" +
		"; some results are exploratory: run at a temperature above 0.5, which the gate does not count (conformance runs for the gate are made at low temperature); not recorded, so the gate still judges those providers by their previous runs: rerun at 0.5 or below (the suites' default is 0)"
	if got := rep.Consequence(); got != want {
		t.Errorf("Consequence() =\n%s\nwant\n%s", got, want)
	}
	// Only an inconclusive and an exploratory result: the first names itself.
	rep.Results, rep.Unsuited = rep.Results[1:], nil
	want = "inconclusive: only transient provider errors (rate limits, unavailable or overloaded, a refused or reset connection); not recorded, so the gate still judges those providers by their previous runs: rerun `router conformance run --provider b --prompt triage` once the provider recovers" +
		"; some results are exploratory: run at a temperature above 0.5, which the gate does not count (conformance runs for the gate are made at low temperature); not recorded, so the gate still judges those providers by their previous runs: rerun at 0.5 or below (the suites' default is 0)"
	if got := rep.Consequence(); got != want {
		t.Errorf("inconclusive and exploratory: Consequence() =\n%s\nwant\n%s", got, want)
	}
}
