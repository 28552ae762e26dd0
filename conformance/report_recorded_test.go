package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// When recording a result fails, no surface says the run passed: Run
// returns the error, the report's passed is false and the result says
// recorded: false with why, and the table marks the row NOT RECORDED and
// says the gate does not have it. (The report said passed, "all 1 passed",
// while the gate had no pass.)
func TestUnrecordedResultIsNotReportedAsPassed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("good", oracle(e.answers, nil))
	// The database refuses this provider's results, as a full disk or a
	// lost connection would.
	if _, err := e.db.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$;
		CREATE TRIGGER refuse_run BEFORE INSERT ON conformance_runs FOR EACH ROW EXECUTE FUNCTION refuse_run();`); err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		Providers: []string{"good"}, PromptNames: []string{"triage"}, RouterVersion: "test"})
	if err == nil || !strings.Contains(err.Error(), "No space left on device") {
		t.Fatalf("Run = %v, want the recording error", err)
	}
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("report %+v, want the one result", rep)
	}
	r := rep.Results[0]
	if rep.Passed || !r.Passed || r.Recorded == nil || *r.Recorded || !strings.Contains(r.RecordError, "No space left on device") {
		t.Fatalf("report passed %v; result passed %v, recorded %v, record_error %q; want the report not passed and the result not recorded, with why",
			rep.Passed, r.Passed, r.Recorded, r.RecordError)
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Passed  bool `json:"passed"`
		Results []struct {
			Recorded *bool `json:"recorded"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &body); err != nil || body.Passed || len(body.Results) != 1 || body.Results[0].Recorded == nil || *body.Results[0].Recorded {
		t.Fatalf("--json: %s (%v); want passed false and recorded false", js.String(), err)
	}

	var tb bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	table := tb.String()
	for _, want := range []string{"pass, NOT RECORDED", "✗ not recorded: ", "1 of 1 not recorded: the gate does not have these results"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "all 1 passed") {
		t.Errorf("table claims a pass:\n%s", table)
	}

	// A recorded result says so.
	if _, err := e.db.Pool.Exec(ctx, `DROP TRIGGER refuse_run ON conformance_runs`); err != nil {
		t.Fatal(err)
	}
	rep = e.run(t, conformance.Options{Providers: []string{"good"}, PromptNames: []string{"triage"}})
	if r := rep.Results[0]; !rep.Passed || r.Recorded == nil || !*r.Recorded || r.RecordError != "" {
		t.Fatalf("recorded run: passed %v, recorded %v, record_error %q", rep.Passed, r.Recorded, r.RecordError)
	}
}
