package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
)

// An interrupted run (Ctrl-C, a CI timeout's SIGTERM) leaves providers or
// prompts untested: the report does not pass, says it was interrupted
// ("interrupted": true in JSON) and how much of it finished, and the table
// does not end "all N passed". Found by review.
func TestInterruptedRunIsNotReportedPassed(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := oracle(e.answers, nil)
	e.add("good", func(n int, req *providers.Request) providers.Step {
		if ans, ok := e.answers.lookup(req.Messages); ok && ans.prompt == "triage" {
			cancel() // interrupted during the second prompt (invoice runs first)
		}
		return ref(n, req)
	})
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites, RouterVersion: "test"})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Run = %v; want an error saying the run was interrupted", err)
	}
	if rep.Passed || !rep.Interrupted || len(rep.Results) != 1 || !rep.Results[0].Passed || rep.Planned != 2 {
		t.Fatalf("report: passed=%v interrupted=%v planned=%d, %d results", rep.Passed, rep.Interrupted, rep.Planned, len(rep.Results))
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "interrupted: 1 of 2 planned results finished; the rest were not run or recorded") ||
		strings.Contains(table.String(), "passed\n") {
		t.Fatalf("table:\n%s", table.String())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Passed      bool `json:"passed"`
		Interrupted bool `json:"interrupted"`
		Planned     int  `json:"planned_results"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got.Passed || !got.Interrupted || got.Planned != 2 {
		t.Fatalf("JSON %+v (%v):\n%s", got, err, js.String())
	}
}

// Interrupted before any result finished: the table does not say there was
// nothing to run. Found by review.
func TestInterruptedBeforeAnyResult(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := oracle(e.answers, nil)
	e.add("good", func(n int, req *providers.Request) providers.Step { cancel(); return ref(n, req) })
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites, RouterVersion: "test"})
	if err == nil {
		t.Fatal("no error from an interrupted run")
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if rep.Passed || !rep.Interrupted || strings.Contains(table.String(), "nothing to run") ||
		!strings.Contains(table.String(), "interrupted: 0 of 2 planned results finished") {
		t.Fatalf("err %v; passed=%v interrupted=%v; table:\n%s", err, rep.Passed, rep.Interrupted, table.String())
	}
}

// A finished run says nothing of an interruption: no "interrupted" in its
// JSON.
func TestFinishedRunIsNotInterrupted(t *testing.T) {
	e := newEnv(t)
	e.add("good", oracle(e.answers, nil))
	rep := e.run(t, conformance.Options{PromptNames: []string{"triage"}})
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || rep.Interrupted || strings.Contains(js.String(), `"interrupted"`) || rep.Planned != 1 {
		t.Fatalf("passed=%v interrupted=%v planned=%d:\n%s", rep.Passed, rep.Interrupted, rep.Planned, js.String())
	}
}
