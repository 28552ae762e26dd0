package conformance_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
)

func loadPrompts(t *testing.T) *prompt.Set {
	t.Helper()
	ps, err := prompt.LoadDir("../prompts")
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func loadSuites(t *testing.T) conformance.Suites {
	t.Helper()
	ss, err := conformance.LoadDir("suites")
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// The shipped suites fit the shipped prompts, every reference reply passes, and
// each suite has the awkward inputs the issue asks for.
func TestShippedSuites(t *testing.T) {
	ps := loadPrompts(t)
	ss := loadSuites(t)
	for _, p := range ps.All() {
		s, ok := ss[p.Name]
		if !ok {
			t.Errorf("prompt %s has no suite", p.ID())
			continue
		}
		if err := s.Check(p); err != nil {
			t.Error(err)
		}
		if len(s.Cases) < 8 {
			t.Errorf("%s: %d cases, want at least 8", p.Name, len(s.Cases))
		}
		var long, nonASCII, refs int
		for _, c := range s.Cases {
			if c.ReferenceJSON() != "" {
				refs++
			}
			in := string(c.InputJSON())
			if len(in) > 3000 {
				long++
			}
			if strings.IndexFunc(in, func(r rune) bool { return r > utf8.RuneSelf }) >= 0 {
				nonASCII++
			}
		}
		if long == 0 || nonASCII < 2 || refs != len(s.Cases) {
			t.Errorf("%s: %d long inputs, %d non-English inputs, %d of %d cases with a reference", p.Name, long, nonASCII, refs, len(s.Cases))
		}
	}
	// triage has cases without the optional customer_tier.
	var without int
	for _, c := range ss["triage"].Cases {
		var in map[string]any
		_ = json.Unmarshal(c.InputJSON(), &in)
		if _, ok := in["customer_tier"]; !ok {
			without++
		}
	}
	if without == 0 {
		t.Error("triage: no case leaves the optional customer_tier empty")
	}
}

func TestSuiteProblemsAreReported(t *testing.T) {
	_, problems := conformance.ParseSuite("x.yaml", []byte(`
prompt: triage
temperature: 3
cases:
  - name: a
    input: {subject: s, body: b}
    expect:
      equal: {category: billing}
      pattern: {/summary: "("}
  - name: a
  - input: {subject: s}
    bogus: 1
`))
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"bogus"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q lack %q", joined, want)
		}
	}
	_, problems = conformance.ParseSuite("x.yaml", []byte(`
prompt: triage
temperature: 3
cases:
  - name: a
    input: {subject: s, body: b}
    expect:
      equal: {category: billing}
      one_of: {/priority: []}
      pattern: {/summary: "("}
  - name: a
  - input: {subject: s}
`))
	joined = strings.Join(problems, "\n")
	for _, want := range []string{"temperature", `equal[category]: "category" is not a JSON pointer`, "one_of[/priority]", "pattern[/summary]",
		"the name is used twice, by cases[0] and cases[1]: rename one of them", "cases[2].name is required", "cases[1] (a).input"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems\n%s\nlack %q", joined, want)
		}
	}

	// A reference that breaks its own expectations, and a version mismatch.
	s, problems := conformance.ParseSuite("x.yaml", []byte(`
prompt: triage
cases:
  - name: a
    input: {subject: s, body: b}
    expect: {equal: {/category: billing}}
    reference: {category: technical, priority: low, summary: "A summary that is long enough.", needs_human: false}
`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	p, _ := loadPrompts(t).Get("triage", "")
	err := s.Check(p)
	if err == nil || !strings.Contains(err.Error(), `case a: reference: expect.equal at /category: got "technical", want "billing"`) {
		t.Fatalf("Check = %v", err)
	}
	s.PromptVersion = "7"
	if err := s.Check(p); err == nil || !strings.Contains(err.Error(), "written for triage@7 but the loaded prompt is triage@3") {
		t.Fatalf("Check = %v", err)
	}
}
