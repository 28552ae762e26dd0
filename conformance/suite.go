package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// SuiteFile is the name of a suite inside its prompt's directory:
// <suites dir>/<prompt name>/suite.yaml.
const SuiteFile = "suite.yaml"

// Suite is the conformance suite of one prompt.
type Suite struct {
	// Prompt is the name of the prompt the suite is for (it must equal the
	// directory name).
	Prompt string `yaml:"prompt"`
	// PromptVersion, when set, is the only prompt version the suite was written
	// for: a run against another loaded version is refused until someone reviews
	// the cases and updates it. Empty: any version.
	PromptVersion string `yaml:"prompt_version"`
	Description   string `yaml:"description"`
	// Temperature of the round trips; default 0.
	Temperature *float32 `yaml:"temperature"`
	Cases       []Case   `yaml:"cases"`

	// File is the suite's path; Digest is the SHA-256 of its bytes, stored with
	// each result.
	File   string `yaml:"-"`
	Digest string `yaml:"-"`
}

// Case is one sample input with what a reply must meet beyond the prompt's
// schema and contract.
type Case struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Input is the job input, written as YAML (it becomes a JSON object). In
	// it, in Reference and in Expect's Equal and OneOf, values are what is
	// written: a number keeps its digits (a json.Number: 12.50 stays 12.50),
	// and an unquoted date (2025-03-03) and an integer with a leading zero
	// (0042) are strings: see literals.value.
	Input map[string]any `yaml:"input"`
	// Expect: expectations on the reply, by JSON pointer.
	Expect Expect `yaml:"expect"`
	// Reference is a known-good reply. Optional; when present it must pass the
	// schema, the contract and the expectations (checked when the suite is
	// checked against its prompt), which keeps the expectations honest. Test
	// doubles answer with it.
	Reference any `yaml:"reference"`

	input     json.RawMessage // Input as JSON
	reference string          // Reference as JSON ("" when absent)
}

// InputJSON is the case's input as a JSON object.
func (c *Case) InputJSON() json.RawMessage { return c.input }

// ReferenceJSON is the case's reference reply as JSON, "" when it has none.
func (c *Case) ReferenceJSON() string { return c.reference }

// Expect lists what a reply must meet, each keyed by a JSON pointer into the
// reply (/category, /line_items/0/amount).
type Expect struct {
	// Equal: the value must equal this one (numbers compare by their exact
	// decimal value, so 12.5 equals 12.50 and 1e1 equals 10, but 12345678901
	// does not equal 12345678902; strings exactly).
	Equal map[string]any `yaml:"equal"`
	// OneOf: the value must equal one of these.
	OneOf map[string][]any `yaml:"one_of"`
	// Length: the array must have exactly this many items (a whole number).
	Length map[string]int `yaml:"length"`
	// Pattern: the string must match this regular expression (Go syntax, RE2).
	Pattern map[string]string `yaml:"pattern"`

	patterns map[string]*regexp.Regexp
}

// Suites are the loaded suites by prompt name.
type Suites map[string]*Suite

// LoadDir loads every dir/<prompt>/suite.yaml. Decoding is strict (unknown fields
// are errors) and every problem of every file is reported together, one per
// line, naming the file and the field. A missing directory is an error.
func LoadDir(dir string) (Suites, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("conformance suites: %w (pass --suites DIR, the directory holding <prompt>/%s)", err, SuiteFile)
	}
	out := Suites{}
	var problems []string
	for _, e := range entries {
		// A link to a directory is followed (os.Stat), as a directory.
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !fi.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name(), SuiteFile)
		b, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		s, errs := ParseSuite(file, b)
		for _, e := range errs {
			problems = append(problems, file+": "+e)
		}
		if s == nil {
			continue
		}
		if s.Prompt != e.Name() {
			problems = append(problems, fmt.Sprintf("%s: prompt: %q must equal the directory name %q", file, s.Prompt, e.Name()))
			continue
		}
		out[s.Prompt] = s
	}
	if len(problems) > 0 {
		return nil, errors.New("conformance suites:\n  " + strings.Join(problems, "\n  "))
	}
	return out, nil
}

// ParseSuite decodes one suite file. It returns the problems found, each naming
// the field (and the line, for what YAML refused); the suite is nil when it
// cannot be used.
func ParseSuite(file string, b []byte) (*Suite, []string) {
	var s Suite
	doc, problems := decodeSuite(b, &s)
	if len(problems) > 0 {
		return nil, problems
	}
	if p := emptyCases(doc); len(p) > 0 {
		return nil, p
	}
	if doc != nil {
		// Decoded strictly above (unknown fields, types); the values that
		// become JSON are taken again from the document, as written
		// (jsonValues).
		problems = jsonValues(doc, &s)
	}
	sum := sha256.Sum256(b)
	s.File, s.Digest = file, hex.EncodeToString(sum[:])
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if s.Prompt == "" {
		add("prompt: name the prompt this suite is for")
	}
	// Written so that NaN (.nan) is outside too: it would reach every
	// request, and no run could encode it (json: unsupported value).
	if s.Temperature != nil && !(*s.Temperature >= 0 && *s.Temperature <= 2) {
		at := ""
		if n := deref(fields(deref(doc))["temperature"]); n != nil {
			at = fmt.Sprintf(", line %d", n.Line)
		}
		add("temperature%s: %v is outside 0..2: write a number from 0 to 2", at, *s.Temperature)
	}
	if len(s.Cases) == 0 {
		add("cases: list at least one case")
	}
	names := map[string]int{} // a case's name: the index of its first case
	for i := range s.Cases {
		c := &s.Cases[i]
		where := fmt.Sprintf("cases[%d]", i)
		if c.Name == "" {
			add("%s.name is required", where)
		} else {
			where = fmt.Sprintf("cases[%d] (%s)", i, c.Name)
		}
		if first, used := names[c.Name]; used && c.Name != "" {
			add("%s: the name is used twice, by cases[%d] and cases[%d]: rename one of them (a run reports and records each case by its name)", where, first, i)
		} else {
			names[c.Name] = i
		}
		if c.Input == nil {
			add("%s.input: write the job input as a mapping", where)
		} else if in, err := json.Marshal(c.Input); err != nil {
			add("%s.input: %v", where, err)
		} else {
			c.input = in
		}
		if c.Reference != nil {
			ref, err := json.Marshal(c.Reference)
			if err != nil {
				add("%s.reference: %v", where, err)
			} else {
				c.reference = string(ref)
			}
		}
		for _, e := range c.Expect.compile() {
			add("%s.expect.%s", where, e)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return &s, nil
}

// emptyCases reports each item of the document's cases list written as null
// (a `-` line with nothing after it, ~): yaml.v3 drops it without a word, and
// a case meant to be there would be silently missing.
func emptyCases(doc *yaml.Node) []string {
	cases := deref(fields(deref(doc))["cases"])
	if cases == nil || cases.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for i, c := range cases.Content {
		if c := deref(c); c != nil && c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null" {
			out = append(out, fmt.Sprintf("line %d: cases[%d] is empty: remove the `-` line or write the entry", c.Line, i))
		}
	}
	return out
}

// Check checks the suite against the loaded prompt it is for: the prompt
// version matches (when the suite names one), every expectation's pointer
// names a value the output schema declares (of a type the expectation can
// judge), every equal value and at least one value of every one_of can be
// there in a reply that passes the schema and the rules (valueCheck), every
// case's input passes the input schema and renders to text the tokenizer
// stage accepts on any target (renderedTextProblems), and every reference
// reply passes the schema, the contract and its case's expectations. These
// are faults of the suite, not of any provider: a misspelt pointer, an
// impossible value or special-token text in an input would fail every
// provider's every reply, and nothing of it may be recorded against one.
func (s *Suite) Check(p *prompt.Prompt) error {
	var problems []string
	if s.PromptVersion != "" && s.PromptVersion != p.Version {
		return fmt.Errorf("%s is written for %s@%s but the loaded prompt is %s: review the cases for the new version, then set prompt_version: %q",
			s.File, s.Prompt, s.PromptVersion, p.ID(), p.Version)
	}
	vc := newValueCheck(p)
	if t := s.Temperature; t != nil && !(*t >= 0 && *t <= 2) { // a Suite built in code; ParseSuite refuses it already
		problems = append(problems, fmt.Sprintf("temperature: %v is outside 0..2: write a number from 0 to 2", *t))
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		for _, e := range c.Expect.checkPaths(p, vc) {
			problems = append(problems, fmt.Sprintf("case %s: expect.%s", c.Name, e))
		}
		if err := p.ValidateInput(c.input); err != nil {
			problems = append(problems, fmt.Sprintf("case %s: input: %v", c.Name, err))
			continue
		}
		msgs, err := p.Render(c.input)
		if err != nil {
			problems = append(problems, fmt.Sprintf("case %s: %v", c.Name, err))
		}
		problems = append(problems, renderedTextProblems(c.Name, msgs)...)
		if c.reference == "" {
			continue
		}
		doc, vs := p.Validator().Validate(c.reference)
		if len(vs) == 0 {
			vs = c.Expect.Check(doc)
		}
		for _, v := range vs {
			problems = append(problems, fmt.Sprintf("case %s: reference: %s", c.Name, v))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s does not fit prompt %s:\n  %s", s.File, p.ID(), strings.Join(problems, "\n  "))
	}
	return nil
}

// renderedTextProblems are what the runner's tokenizer stage would fail in a
// case's rendered messages whatever the target: special-token text
// (<|endoftext|> and the like) and text that is not valid UTF-8 (it does not
// round-trip through any encoding). Such a case fails before any provider is
// called, on every target, and a failure recorded against each would withdraw
// its pass (and take it out of failover) for the suite's doing, not the
// target's: it is a fault of the suite, refused before anything runs.
func renderedTextProblems(caseName string, msgs []providers.Message) []string {
	var out []string
	for i, m := range msgs {
		if sp := tokens.ContainsSpecialTokens(m.Content); len(sp) > 0 {
			out = append(out, fmt.Sprintf("case %s: messages[%d].content: renders the special-token text %s (from the case's input or the prompt's messages): "+
				"the tokenizer stage would fail the case on every target before calling any, which tests none of them; "+
				"take it out of the input, or break it up (like \"< |endoftext| >\") to test text that looks like one",
				caseName, i, strings.Join(sp, ", ")))
		}
		if !utf8.ValidString(m.Content) {
			out = append(out, fmt.Sprintf("case %s: messages[%d].content: renders text that is not valid UTF-8, which no encoding round-trips, "+
				"so the tokenizer stage would fail the case on every target before calling any; make the input and the prompt's messages render valid UTF-8",
				caseName, i))
		}
	}
	return out
}

// Names returns the prompt names that have suites, sorted.
func (ss Suites) Names() []string {
	out := make([]string, 0, len(ss))
	for n := range ss {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// compile checks the pointers and patterns of the expectations.
func (e *Expect) compile() []string {
	var problems []string
	check := func(kind, ptr string) bool {
		if _, err := splitPointer(ptr); err != nil {
			problems = append(problems, fmt.Sprintf("%s[%s]: %v", kind, ptr, err))
			return false
		}
		return true
	}
	for p := range e.Equal {
		check("equal", p)
	}
	for p, vs := range e.OneOf {
		if check("one_of", p) && len(vs) == 0 {
			problems = append(problems, fmt.Sprintf("one_of[%s]: list at least one value", p))
		}
	}
	for p, n := range e.Length {
		if check("length", p) && n < 0 {
			problems = append(problems, fmt.Sprintf("length[%s]: %d is negative", p, n))
		}
	}
	e.patterns = map[string]*regexp.Regexp{}
	for p, re := range e.Pattern {
		if !check("pattern", p) {
			continue
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			problems = append(problems, fmt.Sprintf("pattern[%s]: %v", p, err))
			continue
		}
		e.patterns[p] = rx
	}
	sort.Strings(problems)
	return problems
}

// Check judges a reply (compact JSON that passed schema and contract) against
// the expectations; violations are sorted by path, rules are "expect.equal",
// "expect.one_of", "expect.length" and "expect.pattern".
func (e *Expect) Check(doc json.RawMessage) []contract.Violation {
	v, err := contract.ParseJSON(doc)
	if err != nil {
		return []contract.Violation{{Rule: "json.syntax", Path: "$", Message: err.Error()}}
	}
	var out []contract.Violation
	add := func(rule, path, format string, args ...any) {
		out = append(out, contract.Violation{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	for _, p := range sortedKeys(e.Equal) {
		got, ok := lookup(v, p)
		want := e.Equal[p]
		switch {
		case !ok:
			add("expect.equal", p, "missing; want %s", show(want))
		case !equal(got, want):
			add("expect.equal", p, "got %s, want %s", show(got), show(want))
		}
	}
	for _, p := range sortedKeys(e.OneOf) {
		got, ok := lookup(v, p)
		allowed := make([]string, len(e.OneOf[p]))
		match := false
		for i, a := range e.OneOf[p] {
			allowed[i] = show(a)
			match = match || ok && equal(got, a)
		}
		switch {
		case !ok:
			add("expect.one_of", p, "missing; want one of %s", strings.Join(allowed, ", "))
		case !match:
			add("expect.one_of", p, "got %s, want one of %s", show(got), strings.Join(allowed, ", "))
		}
	}
	for _, p := range sortedKeys(e.Length) {
		got, ok := lookup(v, p)
		arr, isArr := got.([]any)
		switch {
		case !ok:
			add("expect.length", p, "missing; want an array of %d items", e.Length[p])
		case !isArr:
			add("expect.length", p, "got %s, want an array of %d items", show(got), e.Length[p])
		case len(arr) != e.Length[p]:
			add("expect.length", p, "got %d items, want %d", len(arr), e.Length[p])
		}
	}
	for _, p := range sortedKeys(e.Pattern) {
		got, ok := lookup(v, p)
		s, isStr := got.(string)
		rx := e.patterns[p]
		if rx == nil { // not compiled: an Expect built in code
			rx = regexp.MustCompile(e.Pattern[p])
		}
		switch {
		case !ok:
			add("expect.pattern", p, "missing; want a string matching %s", e.Pattern[p])
		case !isStr:
			add("expect.pattern", p, "got %s, want a string matching %s", show(got), e.Pattern[p])
		case !rx.MatchString(s):
			add("expect.pattern", p, "%s does not match %s", show(got), e.Pattern[p])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
