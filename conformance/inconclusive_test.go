package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
)

// runCount is how many runs of provider are recorded.
func runCount(t *testing.T, e *env, provider string) int {
	t.Helper()
	var n int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM conformance_runs WHERE provider = $1`, provider).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A provider that is rate limited during a run (a 429 with a long
// Retry-After) proves nothing about its conformance: the pair is
// inconclusive, not recorded, and the fresh pass it had keeps it eligible.
// The table and the JSON say inconclusive, with the command to rerun, and the
// run does not pass. (A recorded failure withdrew the pass until the next
// run, up to max_age.)
func TestTransientProviderErrorsAreInconclusiveNotFailures(t *testing.T) {
	x := passThenFail(t, providers.Step{Status: 429, RetryAfter: time.Minute})
	rep, r := x.rep, x.r
	if rep.Passed || r.Passed || !r.Inconclusive || r.Recorded != nil {
		t.Fatalf("report passed %v; result passed %v, inconclusive %v, recorded %v: want an inconclusive result, not recorded, and the run not passed",
			rep.Passed, r.Passed, r.Inconclusive, r.Recorded)
	}
	if n := runCount(t, x.e, "backup"); n != 1 {
		t.Fatalf("%d runs recorded, want only the pass", n)
	}
	if !x.ok {
		t.Fatalf("rate limit withdrew the pass: %s", x.why)
	}

	var tb bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	table := tb.String()
	for _, want := range []string{"INCONCLUSIVE: rerun", "1 of 1 inconclusive: only transient provider errors",
		"`router conformance run --provider backup --prompt triage`"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "failed:") || strings.Contains(table, "not eligible") {
		t.Errorf("table calls the inconclusive result a failure:\n%s", table)
	}
	if c := rep.Consequence(); !strings.HasPrefix(c, "inconclusive: ") || !strings.Contains(c, "rerun") {
		t.Errorf("Consequence() = %q, want inconclusive with rerun advice", c)
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Passed  bool   `json:"passed"`
		Rerun   string `json:"rerun"`
		Results []struct {
			Inconclusive bool  `json:"inconclusive"`
			Recorded     *bool `json:"recorded"`
			Cases        []struct {
				Transient bool `json:"transient"`
			} `json:"cases"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &body); err != nil || body.Passed || len(body.Results) != 1 || !body.Results[0].Inconclusive ||
		body.Results[0].Recorded != nil || len(body.Results[0].Cases) == 0 || !body.Results[0].Cases[0].Transient ||
		body.Rerun != "router conformance run --provider backup --prompt triage" {
		t.Fatalf("--json: %s (%v); want passed false, the result inconclusive and not recorded, its cases transient, and the rerun command", js.String(), err)
	}
}

// A pair where some cases passed and the others found the provider
// unavailable (503) is inconclusive, not a pass (the others were not tested)
// and not a failure.
func TestPassedCasesWithTransientErrorsAreInconclusive(t *testing.T) {
	e := newEnv(t)
	good := oracle(e.answers, nil)
	e.add("backup", func(i int, req *providers.Request) providers.Step {
		if ans, ok := e.answers.lookup(req.Messages); ok && ans.index%2 == 1 {
			return providers.Step{Status: 503}
		}
		return good(i, req)
	})
	rep := e.run(t, conformance.Options{Providers: []string{"backup"}, PromptNames: []string{"triage"}})
	r := result(t, rep, "backup", "triage")
	if r.CasesPassed == 0 || r.CasesPassed == r.CasesTotal {
		t.Fatalf("precondition: %d of %d cases passed, want some", r.CasesPassed, r.CasesTotal)
	}
	if r.Passed || !r.Inconclusive || r.Recorded != nil || rep.Passed {
		t.Fatalf("passed %v, inconclusive %v, recorded %v, report passed %v: want inconclusive, not recorded", r.Passed, r.Inconclusive, r.Recorded, rep.Passed)
	}
	if n := runCount(t, e, "backup"); n != 0 {
		t.Fatalf("%d runs recorded, want none", n)
	}
}

// A pair with a real failure is a failure, recorded, whatever transient
// errors its other cases had: a reply that breaks the contract, or a
// provider error that says the request itself is wrong (400).
func TestRealFailuresWithTransientErrorsAreRecordedFailures(t *testing.T) {
	e := newEnv(t)
	good := oracle(e.answers, func(ans answer, ref map[string]any) {
		if ans.index == 0 {
			ref["priority"] = "whenever" // not in the schema's enum
		}
	})
	e.add("mixed", func(i int, req *providers.Request) providers.Step {
		if ans, ok := e.answers.lookup(req.Messages); ok && ans.index%2 == 1 {
			return providers.Step{Status: 429, RetryAfter: time.Minute}
		}
		return good(i, req)
	})
	e.add("refused", func(int, *providers.Request) providers.Step { return providers.Step{Status: 400} })
	rep := e.run(t, conformance.Options{Providers: []string{"mixed", "refused"}, PromptNames: []string{"triage"}})
	for _, p := range []string{"mixed", "refused"} {
		r := result(t, rep, p, "triage")
		if r.Passed || r.Inconclusive || r.Recorded == nil || !*r.Recorded {
			t.Errorf("%s: passed %v, inconclusive %v, recorded %v: want a recorded failure", p, r.Passed, r.Inconclusive, r.Recorded)
		}
	}
	var tb bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if out := tb.String(); !strings.Contains(out, "2 of 2 failed") || strings.Contains(out, "inconclusive") {
		t.Errorf("table:\n%s", out)
	}
}
