package conformance_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// The error line `router conformance run` ends with (Report.Consequence) must
// not drop the prompts without a suite when other results failed, were
// inconclusive or exploratory: under conformance.gate: all a prompt without a
// suite has every job refused, the gravest consequence of the run, and the
// last line — what CI shows — says nothing of it.
func TestConsequenceNamesPromptsWithoutSuiteBesideOtherResults(t *testing.T) {
	for name, res := range map[string]conformance.Result{
		"failed":       {Provider: "a", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Recorded: new(true)},
		"inconclusive": {Provider: "a", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, Inconclusive: true},
		"exploratory":  {Provider: "a", Model: "m", Prompt: "triage", PromptVersion: "2", CasesTotal: 1, CasesPassed: 1, Passed: true, Exploratory: true},
	} {
		rep := &conformance.Report{Gate: conformance.GateAll, Results: []conformance.Result{res}, Unsuited: []string{"invoice@2"}}
		if got := rep.Consequence(); !strings.Contains(got, "no suite") {
			t.Errorf("%s result and invoice@2 without a suite (gate all): Consequence() = %q; want it to say that some prompts have no suite (every job of them is refused)", name, got)
		}
	}
}
