package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A misspelt expectation pointer in a case without a reference is a fault of
// the suite: the run refuses to start, names the case, the pointer and how to
// fix it, and records nothing, so the pass a provider made earlier still
// stands. (The pointer was checked only for its syntax: the run failed every
// provider's every reply and withdrew every pass.)
func TestMisspeltExpectPointerRefusesTheRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("good", oracle(e.answers, nil))
	e.run(t, conformance.Options{Providers: []string{"good"}, PromptNames: []string{"triage"}})

	s, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: triage
cases:
  - name: misspelt
    input: {subject: Refund, body: I was charged twice.}
    expect:
      equal: {/categroy: billing}
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	_, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts,
		Suites: conformance.Suites{"triage": s}, Providers: []string{"good"}, PromptNames: []string{"triage"}, RouterVersion: "test"})
	for _, want := range []string{
		"faults of the suites, not of any provider",
		`case misspelt: expect.equal[/categroy]: path "/categroy": property "categroy" is not declared in the output schema at $ (declared: category, needs_human, priority, summary)`,
		"correct the pointer to name a value of triage@3's output schema",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run = %v; want an error saying %q", err, want)
		}
	}
	var runs int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("%d runs recorded (%v), want only the earlier pass", runs, err)
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, why := gate.Allow(ctx, "good", mustPrompt(t, e, "triage"), store.RoleFailover); !ok {
		t.Fatalf("the earlier pass no longer admits the provider: %s", why)
	}
}

// Every kind of expectation has its pointer resolved against the prompt's
// output schema and rules: a property it does not declare, a step into a
// string, a wildcard, a length of something that is not an array and a
// pattern on something that is not a string are each reported, naming the
// case and the pointer; pointers to declared values of the right type pass.
func TestExpectPointersAreCheckedAgainstTheOutputSchema(t *testing.T) {
	ps := loadPrompts(t)
	triage, _ := ps.Get("triage", "")
	invoice, _ := ps.Get("invoice", "")
	s, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: triage
cases:
  - name: c
    input: {subject: Refund, body: I was charged twice.}
    expect:
      equal: {/category: billing, /summary/0: x}
      one_of: {/prio: [low, high]}
      length: {/category: 3}
      pattern: {/needs_human: "^t", /summary: "."}
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	err := s.Check(triage)
	if err == nil {
		t.Fatal("Check accepted pointers the schema does not have")
	}
	for _, want := range []string{
		`case c: expect.equal[/summary/0]: path "/summary/0": /summary is a string in the output schema, so it has no property "0"`,
		`case c: expect.one_of[/prio]: path "/prio": property "prio" is not declared`,
		`case c: expect.length[/category]: path "/category" is a string in the output schema; this needs an array`,
		`case c: expect.pattern[/needs_human]: path "/needs_human" is a boolean in the output schema; this needs a string`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v\nwant it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "[/category]: path \"/category\": ") || strings.Contains(err.Error(), "pattern[/summary]") {
		t.Errorf("a declared pointer of the right type is refused:\n%v", err)
	}

	s, problems = conformance.ParseSuite("suite.yaml", []byte(`prompt: invoice
cases:
  - name: c
    input: {text: "Invoice 7. Total due (USD): $10.00"}
    expect:
      equal: {/line_items/0/amount: 10.00, /total: 10}
      length: {/line_items: 1}
      pattern: {/line_items/*/description: "."}
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	err = s.Check(invoice)
	if err == nil || !strings.Contains(err.Error(), `case c: expect.pattern[/line_items/*/description]: path "/line_items/*/description": "*" is not allowed here`) ||
		strings.Count(err.Error(), "case c:") != 1 {
		t.Fatalf("Check = %v; want only the wildcard refused", err)
	}
}
