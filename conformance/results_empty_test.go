package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
)

// A run interrupted before its first result finished reports "results": [] in
// JSON, not null: a consumer iterating the results (jq '.results[]') must not
// fail on it. Found by review.
func TestInterruptedBeforeAnyResultReportsEmptyResults(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := oracle(e.answers, nil)
	e.add("good", func(n int, req *providers.Request) providers.Step { cancel(); return ref(n, req) })
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites, RouterVersion: "test"})
	if err == nil || rep == nil {
		t.Fatalf("Run = %v, %v; want a report and an error for an interrupted run", rep, err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if string(got["results"]) != "[]" {
		t.Fatalf(`"results": %s; want []:\n%s`, got["results"], js.String())
	}
}
