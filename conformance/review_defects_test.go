package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/contract"
)

// A long value in an expectation's message is shortened on a character
// boundary, never inside a UTF-8 sequence.
func TestExpectMessageCutsOnARuneBoundary(t *testing.T) {
	e := conformance.Expect{Equal: map[string]any{"/s": "short"}}
	for pad := 70; pad < 80; pad++ {
		got := strings.Repeat("a", pad) + strings.Repeat("é", 10) + "日本語"
		doc, _ := json.Marshal(map[string]string{"s": got})
		vs := e.Check(doc)
		if len(vs) != 1 || !strings.Contains(vs[0].Message, "...") {
			t.Fatalf("pad %d: %+v", pad, vs)
		}
		if !utf8.ValidString(vs[0].Message) {
			t.Fatalf("pad %d: message is not valid UTF-8: %q", pad, vs[0].Message)
		}
	}
}

// hostile is text a provider controls (an error body, a key in its reply):
// terminal escape sequences, other control characters, bidi overrides and a
// byte that is not UTF-8.
const hostile = "bad\x1b]0;owned\x07\x1b[2J\x1b[31mred\u009b1m\u202eevil\x7f\xff\r\n\tend"

// The table prints nothing a terminal would act on: every control character
// from a provider, a model's reply or a suite is shown escaped.
func TestTableEscapesControlCharacters(t *testing.T) {
	rep := &conformance.Report{Results: []conformance.Result{{
		Provider: "p" + hostile, Model: "m" + hostile, Prompt: "triage", PromptVersion: "2", CasesTotal: 1,
		Cases: []conformance.CaseResult{{Name: "case" + hostile, Stage: conformance.StageProvider, Failures: []contract.Violation{
			{Rule: "provider.server", Path: "$", Message: "upstream said: " + hostile},
			{Rule: "no_extra_keys", Path: "/" + hostile},
		}}},
	}}}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	assertPrintable(t, out, true)
	for _, want := range []string{`upstream said: bad\x1b]0;owned\x07\x1b[2J\x1b[31mred\u009b1m\u202eevil\x7f\xff end`, `no_extra_keys at /bad\x1b]0;owned`, `p` + `bad\x1b]0;owned`} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}
	}

	var pb bytes.Buffer
	(&conformance.ProgressLine{W: &pb}).Update(conformance.Progress{Provider: "p" + hostile, Prompt: "triage@2", Case: "c" + hostile, Done: 1, Total: 2})
	line, ok := strings.CutPrefix(pb.String(), "\r\x1b[K") // the line's own control sequence
	if !ok {
		t.Fatalf("progress line %q", pb.String())
	}
	assertPrintable(t, line, false)
}

func assertPrintable(t *testing.T, s string, newlines bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not valid UTF-8: %q", s)
	}
	for _, r := range s {
		if r == '\n' && newlines {
			continue
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Fatalf("control character %U printed in %q", r, s)
		}
	}
}

// --provider a,a (and --prompt x,x) runs and records each once.
func TestRunDeduplicatesProvidersAndPrompts(t *testing.T) {
	e := newEnv(t)
	e.add("good", oracle(e.answers, nil))
	var progress []conformance.Progress
	rep := e.run(t, conformance.Options{Providers: []string{"good", "good"}, PromptNames: []string{"triage", "triage"},
		Progress: func(p conformance.Progress) { progress = append(progress, p) }})
	cases := len(e.suites["triage"].Cases)
	if len(rep.Results) != 1 || !rep.Passed || len(progress) != cases || progress[0].Total != cases {
		t.Fatalf("%d results, passed %v, %d progress events (total %d); want 1 result of %d cases", len(rep.Results), rep.Passed, len(progress), progress[0].Total, cases)
	}
	var n int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM conformance_runs WHERE provider = 'good'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("recorded %d runs (%v), want 1", n, err)
	}
}
