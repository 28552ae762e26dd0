package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// A suite's temperature is checked to be 0..2, naming the field and the line:
// .nan is outside too, as --temperature refuses it. (It passed `t < 0 || t >
// 2`, reached every request, and every result of every provider ended NOT
// RECORDED: "json: unsupported value: NaN".) Found by review.
func TestSuiteTemperatureNaNIsRefused(t *testing.T) {
	for _, temp := range []string{".nan", ".NaN", "-1", "2.5"} {
		s, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: triage\ntemperature: "+temp+"\n"+
			"cases:\n  - name: a\n    input: {subject: s, body: b}\n"))
		if s != nil {
			t.Errorf("temperature %s accepted (temperature %v)", temp, *s.Temperature)
			continue
		}
		if len(problems) != 1 || !strings.HasPrefix(problems[0], "temperature, line 2: ") || !strings.Contains(problems[0], "is outside 0..2") {
			t.Errorf("temperature %s: problems %q", temp, problems)
		}
	}
	if s, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: triage\ntemperature: .nan\ncases:\n  - name: a\n    input: {subject: s, body: b}\n")); s != nil ||
		len(problems) != 1 || problems[0] != "temperature, line 2: NaN is outside 0..2: write a number from 0 to 2" {
		t.Errorf("problems %q", problems)
	}
	for _, temp := range []string{"0", "2", "0.7"} {
		if s, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: triage\ntemperature: "+temp+"\ncases:\n  - name: a\n    input: {subject: s, body: b}\n")); s == nil {
			t.Errorf("temperature %s refused: %q", temp, problems)
		}
	}
}

// A NaN temperature that reaches Run anyway (a Suite built in code, or
// Options.Temperature) is refused before anything runs or is recorded,
// naming temperature, instead of every result ending unrecorded with a JSON
// encoding error. Found by review.
func TestSuiteTemperatureNaNRunIsRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("good", oracle(e.answers, nil))
	nan := float32(0)
	nan /= nan
	s := *e.suites["triage"]
	s.Temperature = &nan
	e.suites["triage"] = &s
	_, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		PromptNames: []string{"triage"}, RouterVersion: "test"})
	if err == nil || !strings.Contains(err.Error(), "temperature: NaN is outside 0..2") {
		t.Fatalf("Run = %v; want the suite refused, naming temperature", err)
	}
	e.suites = loadSuites(t)
	_, err = conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		PromptNames: []string{"triage"}, RouterVersion: "test", Temperature: &nan})
	if err == nil || !strings.Contains(err.Error(), "temperature NaN is outside 0..2") {
		t.Fatalf("Run with Options.Temperature NaN = %v; want it refused", err)
	}
	var runs int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs`).Scan(&runs); err != nil || runs != 0 {
		t.Fatalf("%d runs recorded (%v), want none", runs, err)
	}
}
