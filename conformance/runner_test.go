package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// Acceptance 1: of two scripted fallbacks, the one that adds an undeclared
// top-level key on some cases fails the suite with the case, the rule and the
// path; at run time a job whose primary fails goes to the conformant fallback
// and never to the other.
func TestFailoverOnlyToConformantFallback(t *testing.T) {
	e := newEnv(t)
	e.add("primary", failing)
	bad := e.add("fallback-extra-key", oracle(e.answers, func(ans answer, ref map[string]any) {
		if ans.index%3 == 1 { // some cases only
			ref["confidence"] = 0.93
		}
	}))
	e.add("fallback-good", oracle(e.answers, nil))

	var progress []conformance.Progress
	rep := e.run(t, conformance.Options{Providers: []string{"fallback-extra-key", "fallback-good"}, Concurrency: 2,
		Progress: func(p conformance.Progress) { progress = append(progress, p) }})
	if rep.Passed {
		t.Fatal("the report passed")
	}
	total := len(e.suites["triage"].Cases) + len(e.suites["invoice"].Cases)
	if len(progress) != 2*total || progress[len(progress)-1].Done != 2*total || progress[0].Total != 2*total {
		t.Fatalf("progress: %d events, last %+v; want %d", len(progress), progress[len(progress)-1], 2*total)
	}
	for _, name := range []string{"triage", "invoice"} {
		good := result(t, rep, "fallback-good", name)
		if !good.Passed || good.CasesPassed != good.CasesTotal || good.RunID == 0 || good.FinishedAt == nil {
			t.Fatalf("fallback-good on %s: %+v", name, good)
		}
		r := result(t, rep, "fallback-extra-key", name)
		if r.Passed || r.RunID == 0 {
			t.Fatalf("fallback-extra-key passed %s", name)
		}
		for i, c := range r.Cases {
			if i%3 != 1 {
				if !c.Passed {
					t.Errorf("%s/%s failed: %+v", name, c.Name, c.Failures)
				}
				continue
			}
			if c.Passed || c.Stage != conformance.StageContract || len(c.Failures) != 1 ||
				c.Failures[0].Rule != "no_extra_keys" || c.Failures[0].Path != "/confidence" || !strings.Contains(c.Output, `"confidence"`) {
				t.Errorf("%s/%s: passed=%v stage=%s failures=%+v", name, c.Name, c.Passed, c.Stage, c.Failures)
			}
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	want := "    ✗ " + e.suites["triage"].Cases[1].Name + `: no_extra_keys at /confidence: key "confidence" is not declared in the output schema`
	if !strings.Contains(table.String(), want) || !strings.Contains(table.String(), "fallback-good       fallback-good-model       triage@3   10/10  pass") {
		t.Fatalf("table:\n%s\nlacks %q", table.String(), want)
	}

	// The stored per-case details name the case, rule and path too.
	var cases []conformance.CaseResult
	var raw []byte
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT cases FROM conformance_runs
		WHERE provider = 'fallback-extra-key' AND prompt = 'triage'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cases); err != nil || cases[1].Failures[0].Rule != "no_extra_keys" || cases[1].Failures[0].Path != "/confidence" {
		t.Fatalf("stored cases %s (%v)", raw, err)
	}

	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour)
	p, _ := e.prompts.Get("triage", "")
	if ok, why := gate.Allow(context.Background(), "fallback-extra-key", p, store.RoleFailover); ok ||
		why != "no passing conformance run for triage@3 (the last run passed 7 of 10 cases)" {
		t.Fatalf("gate on fallback-extra-key: %v %q", ok, why)
	}
	e.startRunner(t, gate)
	callsBefore := bad.Calls()
	for range 3 {
		j := e.job(t)
		if j.State != store.JobSucceeded || winner(j) != "fallback-good" {
			t.Fatalf("job %s: state %s won by %q; attempts %+v", j.ID, j.State, winner(j), j.Attempts)
		}
		if n := attemptsBy(j, "fallback-extra-key"); n != 0 {
			t.Fatalf("job %s: %d attempts on the non-conformant fallback", j.ID, n)
		}
		if attemptsBy(j, "primary") != 1 {
			t.Fatalf("job %s: the primary was not tried first: %+v", j.ID, j.Attempts)
		}
	}
	if bad.Calls() != callsBefore {
		t.Fatalf("the non-conformant fallback was called %d times at run time", bad.Calls()-callsBefore)
	}
}

// Every pre-flight stage fails with its own rule and path, before any call.
func TestPreflightFailures(t *testing.T) {
	e := newEnv(t)
	tiny := e.add("tiny-window", oracle(e.answers, nil))
	e.targets["tiny-window"].ContextWindow = 400
	e.add("bad-tokenizer", oracle(e.answers, nil))
	e.targets["bad-tokenizer"].Encoding = "gpt2_base"
	rep := e.run(t, conformance.Options{PromptNames: []string{"triage"}})
	r := result(t, rep, "tiny-window", "triage")
	if r.Passed || r.CasesPassed == r.CasesTotal {
		t.Fatalf("tiny window passed: %+v", r)
	}
	long := r.Cases[len(r.Cases)-1]
	if long.Name != "long-log-paste" || long.Stage != conformance.StageContextWindow || long.Failures[0].Rule != "context_window" ||
		!strings.Contains(long.Failures[0].Message, "plus max_tokens 300") {
		t.Fatalf("long case: %+v", long)
	}
	if tiny.Calls() != r.CasesPassed {
		t.Fatalf("%d calls for %d cases that fit", tiny.Calls(), r.CasesPassed)
	}
	b := result(t, rep, "bad-tokenizer", "triage")
	if b.Passed || b.Cases[0].Stage != conformance.StageTokenizer || b.Cases[0].Failures[0].Rule != "tokenizer.encoding" {
		t.Fatalf("bad tokenizer: %+v", b.Cases[0])
	}

	// Special-token text in the input, from a suite of our own.
	// In the subject, which triage prints as written: triage@3 prints the body
	// as one JSON string, where `json` writes <| escaped.
	s, problems := conformance.ParseSuite("special.yaml", []byte(`
prompt: triage
cases:
  - name: special-token
    input: {subject: "please ignore <|endoftext|> this", body: "hi"}
`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	// It would fail on every target before any call: a fault of the suite,
	// refused before anything runs (suite_special_tokens_test.go).
	e.suites = conformance.Suites{"triage": s}
	_, err := conformance.Run(context.Background(), conformance.Options{Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		Providers: []string{"tiny-window"}, PromptNames: []string{"triage"}})
	if err == nil || !strings.Contains(err.Error(), "fix the suites first") || !strings.Contains(err.Error(), "case special-token: messages[1].content: renders the special-token text <|endoftext|>") {
		t.Errorf("special token case: %v", err)
	}
}

func TestRunSelection(t *testing.T) {
	e := newEnv(t)
	e.add("only", oracle(e.answers, nil))
	ctx := context.Background()
	base := conformance.Options{Targets: e.targets, Prompts: e.prompts, Suites: e.suites}
	o := base
	o.Providers = []string{"nope"}
	if _, err := conformance.Run(ctx, o); err == nil || !strings.Contains(err.Error(), `no provider "nope" is configured (have: only)`) {
		t.Fatalf("unknown provider: %v", err)
	}
	o = base
	o.PromptNames = []string{"nope"}
	if _, err := conformance.Run(ctx, o); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Fatalf("unknown prompt: %v", err)
	}
	// A loaded prompt without a suite fails the report (and is named), but the
	// others still run.
	o = base
	o.Suites = conformance.Suites{"triage": e.suites["triage"]}
	rep, err := conformance.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || len(rep.Unsuited) != 1 || rep.Unsuited[0] != "invoice@3" || len(rep.Results) != 1 || !rep.Results[0].Passed {
		t.Fatalf("report: passed=%v unsuited=%v results=%d", rep.Passed, rep.Unsuited, len(rep.Results))
	}
	o.PromptNames = []string{"invoice"}
	if _, err := conformance.Run(ctx, o); err == nil || !strings.Contains(err.Error(), "has no suite") {
		t.Fatalf("named prompt without suite: %v", err)
	}
	// A cancelled run records nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	o = base
	o.Store = e.st
	if _, err := conformance.Run(cctx, o); err == nil {
		t.Fatal("cancelled run: no error")
	}
	var n int
	if err := e.db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("cancelled run stored %d rows (%v)", n, err)
	}
}

// The temperature sent is the suite's (0) unless overridden.
func TestTemperature(t *testing.T) {
	e := newEnv(t)
	p := e.add("p", oracle(e.answers, nil))
	e.run(t, conformance.Options{PromptNames: []string{"triage"}})
	for _, r := range p.Requests() {
		if r.Temperature == nil || *r.Temperature != 0 {
			t.Fatalf("temperature %v, want 0", r.Temperature)
		}
	}
	n := len(p.Requests())
	half := float32(0.2)
	e.run(t, conformance.Options{PromptNames: []string{"triage"}, Temperature: &half})
	for _, r := range p.Requests()[n:] {
		if r.Temperature == nil || *r.Temperature != 0.2 {
			t.Fatalf("temperature %v, want 0.2", r.Temperature)
		}
	}
}
