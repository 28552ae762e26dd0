package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

const oneCase = `prompt: triage
cases:
  - name: a
    input: {subject: s, body: b}
`

// A second YAML document in a suite file is refused naming its line (it was
// ignored, with its cases); an empty one after the suite (a trailing "---")
// is fine.
func TestSuiteWithASecondDocumentIsRefused(t *testing.T) {
	s, problems := conformance.ParseSuite("suite.yaml", []byte(oneCase+"---\ncases:\n  - name: b\n    input: {subject: s, body: b}\n"))
	want := `line 5: a second YAML document starts here ("---"), and a suite is one document`
	if s != nil || len(problems) != 1 || !strings.Contains(problems[0], want) || !strings.Contains(problems[0], "move its cases into the cases list above it") {
		t.Fatalf("problems %q; want one saying %q and how to fix it", problems, want)
	}
	for _, tail := range []string{"---\n", "---\n...\n", "---\n# only a comment\n"} {
		if s, problems := conformance.ParseSuite("suite.yaml", []byte(oneCase+tail)); s == nil {
			t.Errorf("a suite ending %q is refused: %v", tail, problems)
		}
	}
}

// What YAML refuses is said in the suite's words: the field (with the case's
// name), the line, and what is expected there — no Go type names.
func TestSuiteYAMLErrorsNameTheFieldAndLine(t *testing.T) {
	for _, c := range []struct {
		suite string
		want  string
	}{
		{"prompt: triage\ncases:\n  - name: a\n    input: [subject, body]\n",
			"cases[0] (a).input: line 4: a list, where a mapping is expected"},
		{"prompt: triage\ncases:\n  - name: a\n    input: {subject: s, body: b}\n    expected: {equal: {/category: billing}}\n",
			"cases[0] (a).expected: unknown field (line 5); known fields here: description, expect, input, name, reference"},
		{"prompt: triage\ncases:\n  - name: a\n    input: {subject: s, body: b}\n    expect: {lenght: {/x: 1}}\n",
			"cases[0] (a).expect.lenght: unknown field (line 5); known fields here: equal, length, one_of, pattern"},
		{"prompt: invoice\ncases:\n  - name: a\n    input: {text: t}\n    expect:\n      length: {/line_items: three}\n",
			`cases[0] (a).expect.length[/line_items]: line 6: the text "three", where a whole number is expected`},
		{"prompt: triage\ncases:\n  - name: a\n    input: {subject: s, body: b}\n    expect:\n      one_of: {/category: billing}\n",
			`cases[0] (a).expect.one_of[/category]: line 6: the text "billing", where a list is expected`},
		{"prompt: triage\ncases: {name: a}\n", "cases: line 2: a mapping, where a list of cases is expected"},
		{"prompt: triage\ntemperature: warm\ncases:\n  - name: a\n    input: {subject: s, body: b}\n",
			`temperature: line 2: the text "warm", where a number is expected`},
		{"prompt: triage\ncases:\n  - name: a\n    input: {subject: s, subject: t}\n",
			`cases[0] (a).input.subject: line 4: "subject" appears again (first at line 4); a key may appear once in a mapping: delete one`},
		{"- prompt: triage\n", "line 1: a suite is a mapping of fields (prompt: ..., cases: ...), not a list"},
		{"prompt: triage\ncases:\n  - name: a\n   input: x\n", "not valid YAML: line 2: did not find expected '-' indicator"},
	} {
		s, problems := conformance.ParseSuite("suite.yaml", []byte(c.suite))
		all := strings.Join(problems, "\n")
		if s != nil || !strings.Contains(all, c.want) {
			t.Errorf("suite\n%s\nproblems:\n%s\nwant %q", c.suite, all, c.want)
		}
		for _, jargon := range []string{"interface {}", "conformance.", "unmarshal", "yaml: "} {
			if strings.Contains(all, jargon) {
				t.Errorf("problems say %q:\n%s", jargon, all)
			}
		}
	}
}

// A suite directory that is a link to a directory is loaded like a directory
// (it was skipped, and the command then said the prompt had no suite).
func TestLoadDirFollowsLinkedDirectories(t *testing.T) {
	real := t.TempDir()
	if err := os.WriteFile(filepath.Join(real, conformance.SuiteFile), []byte(oneCase), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(real, filepath.Join(dir, "triage")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	ss, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := ss["triage"]; s == nil || len(s.Cases) != 1 {
		t.Fatalf("suites %v; want triage's, through the link", ss.Names())
	}
}
