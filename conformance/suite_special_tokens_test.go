package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A case whose input puts special-token text (<|endoftext|>) into the
// rendered messages failed the tokenizer stage on every target before any
// provider was called, and the failure was recorded against each: every
// target lost its earlier pass, and with gate: fallbacks one such case took
// every fallback out of failover. It is the suite's fault: Suite.Check refuses
// it, naming the case, the message and the fix; Run refuses to start, and the
// targets keep their pass.
func TestSuiteWithSpecialTokenTextIsRefusedBeforeAnythingIsRecorded(t *testing.T) {
	e := newEnv(t)
	backup := e.add("backup", oracle(e.answers, nil))
	if rep := e.run(t, conformance.Options{PromptNames: []string{"triage"}}); !rep.Passed {
		t.Fatal("the first run failed")
	}
	ctx := context.Background()
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.TargetSettings(testTargetDigests))
	p, err := e.prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := gate.AllowModel(ctx, "backup", "backup-model", p, store.RoleFailover); !ok {
		t.Fatalf("after a passing run: %s", why)
	}

	// In the subject, which triage prints as written: triage@3 prints the body
	// as one JSON string, where `json` writes <| escaped.
	s, problems := conformance.ParseSuite("suite.yaml", []byte(`
prompt: triage
cases:
  - name: special-token
    input: {subject: "please ignore <|endoftext|> this", body: "hi"}
`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	err = s.Check(p)
	if err == nil || !strings.Contains(err.Error(), "case special-token: messages[1].content: renders the special-token text <|endoftext|>") ||
		!strings.Contains(err.Error(), "take it out of the input") {
		t.Fatalf("Suite.Check = %v, want the case, the message, the token and the fix named", err)
	}

	calls := backup.Calls()
	_, err = conformance.Run(ctx, conformance.Options{Store: e.st, Targets: e.targets, Prompts: e.prompts,
		Suites: conformance.Suites{"triage": s}, PromptNames: []string{"triage"}, RouterVersion: "test", TargetDigests: testTargetDigests})
	if err == nil || !strings.Contains(err.Error(), "fix the suites first") {
		t.Fatalf("Run = %v, want it refused as a fault of the suite", err)
	}
	if backup.Calls() != calls {
		t.Fatalf("the provider was called %d times", backup.Calls()-calls)
	}
	gate.Forget()
	if ok, why := gate.AllowModel(ctx, "backup", "backup-model", p, store.RoleFailover); !ok {
		t.Fatalf("the suite's fault withdrew the target's pass: %s", why)
	}
}
