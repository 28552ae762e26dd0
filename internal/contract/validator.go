package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/routerhq/router/internal/jsontext"
)

// Validator judges outputs against one compiled schema and one compiled set of
// Rules. It is immutable and safe for concurrent use.
type Validator struct {
	schema      *Schema
	declared    map[string]bool
	noExtraKeys bool
	allowFenced bool
	enums       []enumCheck
	ranges      []rangeCheck
	equal       []equalCheck
	products    []productCheck
	sums        []sumCheck
	custom      []customCheck
}

type enumCheck struct {
	ptr     pointer
	allowed []any // normalized: numbers as json.Number
}

type rangeCheck struct {
	ptr      pointer
	min, max json.Number // decimal text of the bounds; "" for an open one
}

type equalCheck struct{ left, right pointer }

type productCheck struct {
	items   pointer
	result  string
	factors []string
	tol     float64
}

type sumCheck struct {
	items           pointer
	field, multiply string
	total           pointer
	tol             float64
}

type customCheck struct {
	name string
	fn   RuleFunc
}

// RuleError is one problem with a Rules value found by NewValidator. Field names
// the rule as written in prompt.yaml under `rules:`, like "sums[0].total" or
// "enums[/category]".
type RuleError struct {
	Field string
	Err   error
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *RuleError) Unwrap() error { return e.Err }

// NewValidator compiles schemaJSON (see CompileSchema) and rules once. Errors name
// the rule field at fault (for example `sums[0].total: ...`); rule problems are
// *RuleError values joined with errors.Join, one per line.
func NewValidator(schemaJSON []byte, schemaURL string, rules Rules) (*Validator, error) {
	s, err := CompileSchema(schemaJSON, schemaURL)
	if err != nil {
		return nil, err
	}
	return NewValidatorFromSchema(s, rules)
}

// NewRequestValidator is NewValidator for a schema supplied by a caller: it is
// compiled with CompileRequestSchema, so it loads nothing from outside itself.
func NewRequestValidator(schemaJSON []byte, name string, rules Rules) (*Validator, error) {
	s, err := CompileRequestSchema(schemaJSON, name)
	if err != nil {
		return nil, err
	}
	return NewValidatorFromSchema(s, rules)
}

// NewValidatorFromSchema is NewValidator for an already compiled schema. It checks
// that rule paths are well formed and name properties the schema declares, and
// that custom rules are registered.
func NewValidatorFromSchema(s *Schema, rules Rules) (*Validator, error) {
	v := &Validator{
		schema:      s,
		noExtraKeys: rules.NoExtraKeysEnabled(),
		allowFenced: rules.AllowFencedEnabled(),
	}
	var errs []error
	fail := func(field string, err error) { errs = append(errs, &RuleError{Field: field, Err: err}) }
	// path parses a rule path and checks it against the schema; kinds, when
	// given, are the types of value the rule can judge there ("number", ...).
	path := func(field, p string, wildOK bool, kinds ...string) (pointer, bool) {
		ptr, err := parsePointer(p)
		if err != nil {
			fail(field, err)
			return ptr, false
		}
		if ptr.wild && !wildOK {
			fail(field, fmt.Errorf("path %q: \"*\" is not allowed here; name one value", p))
			return ptr, false
		}
		end, err := s.declared(ptr.segs)
		if err != nil {
			fail(field, fmt.Errorf("path %q: %w", p, err))
			return ptr, false
		}
		if len(v.declared) > 0 && len(ptr.segs) > 0 && !v.declared[ptr.segs[0]] {
			// The schema admits the key (additionalProperties, patternProperties)
			// but no_extra_keys rejects every output that has it.
			fail(field, fmt.Errorf("path %q: no_extra_keys rejects the top-level key %q (the output schema does not declare it in \"properties\"), so this rule could never apply; declare it or set no_extra_keys: false", p, ptr.segs[0]))
			return ptr, false
		}
		if len(kinds) > 0 && !allows(end, kinds...) {
			fail(field, fmt.Errorf("path %q is %s in the output schema; this rule needs %s", p, typeWords(end), kindWords(kinds)))
			return ptr, false
		}
		return ptr, true
	}
	field := func(name, key string, items pointer) bool {
		if key == "" || strings.Contains(key, "/") {
			fail(name, fmt.Errorf("%q must be the name of one field of each item (like amount)", key))
			return false
		}
		end, err := s.declared(append(append([]string{}, items.segs...), "*", key))
		if err != nil {
			fail(name, err)
			return false
		}
		if !allows(end, "number") {
			fail(name, fmt.Errorf("field %q is %s in the output schema; this rule needs a number", key, typeWords(end)))
			return false
		}
		return true
	}

	if v.noExtraKeys {
		declared, problems := extraKeys(s)
		if len(declared) == 0 {
			fail("no_extra_keys", errors.New("the output schema declares no top-level properties, so every key would be extra; declare them or set no_extra_keys: false"))
		}
		for _, e := range problems {
			fail("no_extra_keys", e)
		}
		v.declared = declared
	}

	for _, p := range sortedKeys(rules.Enums) {
		name := fmt.Sprintf("enums[%s]", p)
		ptr, ok := path(name, p, true)
		if !ok {
			continue
		}
		if len(rules.Enums[p]) == 0 {
			fail(name, errors.New("list at least one allowed value"))
			continue
		}
		allowed := make([]any, len(rules.Enums[p]))
		for i, a := range rules.Enums[p] {
			allowed[i] = normalize(a)
		}
		end, _ := s.declared(ptr.segs) // path checked it
		if problems := enumTypeProblems(p, end, allowed); len(problems) > 0 {
			for _, e := range problems {
				fail(name, e)
			}
			continue
		}
		v.enums = append(v.enums, enumCheck{ptr: ptr, allowed: allowed})
	}

	for _, p := range sortedKeys(rules.Ranges) {
		name := fmt.Sprintf("ranges[%s]", p)
		ptr, ok := path(name, p, true, "number", "string", "array")
		if !ok {
			continue
		}
		lo, hi, err := compileRange(rules.Ranges[p])
		if err != nil {
			fail(name, err)
			continue
		}
		v.ranges = append(v.ranges, rangeCheck{ptr: ptr, min: lo, max: hi})
	}

	for i, e := range rules.Equal {
		// A side left out would be read as "" (the whole output) and be
		// refused for its type, naming a path no one wrote.
		missing := false
		for _, side := range [...]struct{ name, p string }{{"left", e.Left}, {"right", e.Right}} {
			if side.p == "" {
				fail(fmt.Sprintf("equal[%d].%s", i, side.name), errors.New("missing: name the path of a value to compare, like /total"))
				missing = true
			}
		}
		if missing {
			continue
		}
		l, ok1 := path(fmt.Sprintf("equal[%d].left", i), e.Left, false)
		r, ok2 := path(fmt.Sprintf("equal[%d].right", i), e.Right, false)
		if !ok1 || !ok2 {
			continue
		}
		le, _ := s.declared(l.segs)
		re, _ := s.declared(r.segs)
		if err := equalTypeProblem(e.Left, e.Right, le, re); err != nil {
			fail(fmt.Sprintf("equal[%d]", i), err)
			continue
		}
		v.equal = append(v.equal, equalCheck{left: l, right: r})
	}

	for i, p := range rules.Products {
		name := fmt.Sprintf("products[%d]", i)
		items, ok := path(name+".items", p.Items, false, "array")
		ok = ok && field(name+".result", p.Result, items)
		if len(p.Factors) < 2 {
			fail(name+".factors", errors.New("list at least two fields to multiply"))
			ok = false
		}
		for j, f := range p.Factors {
			ok = field(fmt.Sprintf("%s.factors[%d]", name, j), f, items) && ok
		}
		tol, err := tolerance(p.Tolerance)
		if err != nil {
			fail(name+".tolerance", err)
			ok = false
		}
		if ok {
			v.products = append(v.products, productCheck{items: items, result: p.Result, factors: p.Factors, tol: tol})
		}
	}

	for i, sr := range rules.Sums {
		name := fmt.Sprintf("sums[%d]", i)
		items, ok := path(name+".items", sr.Items, false, "array")
		ok = ok && field(name+".field", sr.Field, items)
		if sr.Multiply != "" {
			ok = field(name+".multiply", sr.Multiply, items) && ok
		}
		total, ok2 := path(name+".total", sr.Total, false, "number")
		if sr.Total == "" || sr.Total == "$" {
			fail(name+".total", errors.New("name the path of the total, like /total"))
			ok2 = false
		}
		tol, err := tolerance(sr.Tolerance)
		if err != nil {
			fail(name+".tolerance", err)
			ok2 = false
		}
		if ok && ok2 {
			v.sums = append(v.sums, sumCheck{items: items, field: sr.Field, multiply: sr.Multiply, total: total, tol: tol})
		}
	}

	for i, n := range rules.Custom {
		if slices.ContainsFunc(v.custom, func(c customCheck) bool { return c.name == n }) {
			continue // listed twice: run it once
		}
		fn, ok := lookup(n)
		if !ok {
			fail(fmt.Sprintf("custom[%d]", i), fmt.Errorf("no Go rule named %q is registered (registered: %s); register it with contract.Register in an init function", n, strings.Join(Registered(), ", ")))
			continue
		}
		v.custom = append(v.custom, customCheck{name: n, fn: fn})
	}

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
}

// Schema returns the compiled output schema.
func (v *Validator) Schema() *Schema { return v.schema }

// Validate judges one raw output. It trims JSON whitespace (space, tab, CR, LF;
// TrimJSONSpace) and, unless allow_fenced is false, unwraps a single markdown
// code fence (StripFence); then it parses the JSON (failure: one json.syntax
// violation at $), refuses an object with a key twice (one json.duplicate_key
// violation at the object's pointer), checks the schema (every leaf failure) and, only
// when the schema passes, the business rules (every failure); either list is cut
// at MaxViolations (see Schema.Check and CheckRules). On success doc is the
// output as compact JSON (key order and number spelling kept) and violations is
// nil; on failure doc is nil.
//
// The answer is refused as json.unstorable when jsonb cannot hold it (the
// escape \u0000, a lone surrogate escape, a number beyond numeric's range):
// a prompt job stores it as a JSON value. An answer stored as a string of
// another document (a chat completion's content) is judged by ValidateText.
// Either way an answer nested deeper than MaxAnswerDepth is refused as
// json.too_deep.
func (v *Validator) Validate(output string) (doc json.RawMessage, violations []Violation) {
	return v.validate(output, true)
}

// ValidateText is Validate for an answer kept as text, not as a JSON value:
// a chat completion's message content or a tool call's arguments, a JSON
// string inside the completion stored as the job's result. There the escape
// \u0000, a lone surrogate escape or a number such as 1e2000 are plain
// characters of that string, storable as the completion is (chat.Judge
// checks the completion itself), so they are judged against the schema
// alone and are not refused as json.unstorable.
func (v *Validator) ValidateText(output string) (doc json.RawMessage, violations []Violation) {
	return v.validate(output, false)
}

func (v *Validator) validate(output string, storedAsJSON bool) (doc json.RawMessage, violations []Violation) {
	s := TrimJSONSpace(output)
	if inner, fenced := StripFence(s); fenced {
		if !v.allowFenced {
			return nil, []Violation{{Rule: "json.fenced", Path: "$", Message: "output is wrapped in a markdown code fence; the prompt sets allow_fenced: false, so the model must answer with bare JSON"}}
		}
		s = inner
	}
	// One copy of the text for every check: none of them changes or keeps it.
	b := []byte(s)
	parsed, err := ParseJSON(b)
	if err != nil {
		return nil, []Violation{{Rule: "json.syntax", Path: "$", Message: err.Error()}}
	}
	if deep := TooDeep(b); deep != nil {
		return nil, []Violation{*deep}
	}
	if storedAsJSON {
		if vs := unstorable(b); vs != nil {
			return nil, vs
		}
	} else if vs := textNumberViolation(parsed, b); vs != nil {
		return nil, vs
	}
	if dup := DuplicateKey(b); dup != nil {
		return nil, []Violation{*dup}
	}
	if vs := v.schema.Check(parsed); len(vs) > 0 {
		return nil, vs
	}
	if vs := v.CheckRules(parsed); len(vs) > 0 {
		return nil, vs
	}
	var buf bytes.Buffer
	buf.Grow(len(s))
	if err := json.Compact(&buf, b); err != nil { // cannot happen: s parsed
		return nil, []Violation{{Rule: "json.syntax", Path: "$", Message: err.Error()}}
	}
	return buf.Bytes(), nil
}

// unstorable is the json.unstorable violation for JSON text b that jsonb
// cannot hold, nil when it can.
func unstorable(b []byte) []Violation {
	if e := jsontext.Check(b); e != nil {
		return []Violation{{Rule: "json.unstorable", Path: "$", Message: "output holds " + e.Error() + "; it cannot be stored as the result"}}
	}
	if e := jsontext.CheckNumbers(b); e != nil {
		// Beyond numeric's range, or so long written out (1e131000) that
		// the job could not be read back: the provider's fault either way.
		return []Violation{{Rule: "json.unstorable", Path: "$", Message: "the output cannot be stored as the result: " + e.Error()}}
	}
	return nil
}

// kindWords names the kinds of value a rule needs: "an array", "a number, a
// string or an array".
func kindWords(kinds []string) string {
	words := make([]string, len(kinds))
	for i, k := range kinds {
		if k == "array" || k == "object" {
			words[i] = "an " + k
		} else {
			words[i] = "a " + k
		}
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
