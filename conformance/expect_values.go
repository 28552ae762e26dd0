package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
)

// valueCheck tells whether a value of an expectation (equal, one_of) can be at
// its pointer in a reply that passes the prompt's output schema and rules. A
// value no such reply can hold (the text "yes" where the schema wants a
// boolean, "Billing" where the rules' enum has "billing") fails every
// provider's every reply, as a misspelt pointer does: a fault of the suite,
// refused before anything runs or is recorded, so a typo cannot withdraw
// every provider's pass.
//
// It refuses only what is certain. The value is validated against the
// schemas that surely apply at the pointer — "properties", "items" and
// "prefixItems" along the way, with "$ref" and "allOf" — never against an
// anyOf/oneOf branch or if/then/else, which need not apply; a schema it cannot
// follow there, or one using $dynamicRef or $recursiveRef (whose meaning
// depends on where validation started), is not judged. The rules are the
// prompt's enums and ranges, judged on a reply that holds just the value.
type valueCheck struct {
	root  *jsonschema.Schema  // the output schema, compiled again; nil: not judged
	rules *contract.Validator // the prompt's enums and ranges alone; nil: none
}

// newValueCheck prepares the judgement for prompt p. What cannot be
// prepared (a prompt built without its schema's bytes) is not judged.
func newValueCheck(p *prompt.Prompt) *valueCheck {
	vc := &valueCheck{}
	// contract.Schema keeps its compiled form to itself: compile the same
	// bytes the same way (contract.CompileSchema: draft 2020-12 unless the
	// schema says otherwise, formats asserted, references beside the file
	// followed).
	if len(p.OutputSchema) > 0 {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		c.AssertFormat = true
		url := p.OutputSchemaFile
		if url == "" {
			url = "mem:///output.schema.json"
		}
		if c.AddResource(url, bytes.NewReader(p.OutputSchema)) == nil {
			if root, err := c.Compile(url); err == nil {
				vc.root = root
			}
		}
	}
	if v := p.Validator(); v != nil && (len(p.Rules.Enums) > 0 || len(p.Rules.Ranges) > 0) {
		off := false
		rules, err := contract.NewValidatorFromSchema(v.Schema(), contract.Rules{NoExtraKeys: &off, Enums: p.Rules.Enums, Ranges: p.Rules.Ranges})
		if err == nil {
			vc.rules = rules
		}
	}
	return vc
}

// why says why no reply that passes the schema and the rules can hold value
// at ptr (a pointer CheckPath accepted), "" when one can or when it cannot
// tell.
func (vc *valueCheck) why(ptr string, value any) string {
	segs, err := splitPointer(ptr)
	if err != nil {
		return ""
	}
	// The value as a reply's value is decoded: numbers as json.Number.
	b, err := json.Marshal(value)
	if err != nil {
		return ""
	}
	v, err := contract.ParseJSON(b)
	if err != nil {
		return ""
	}
	schemas, arrays := vc.schemasAt(segs)
	var reasons []string
	for _, s := range schemas {
		var ve *jsonschema.ValidationError
		if err := s.Validate(v); errors.As(err, &ve) {
			reasons = appendLeaves(reasons, ve, ptr)
		}
	}
	if vc.rules != nil {
		doc, at := probe(segs, arrays, v)
		for _, x := range vc.rules.CheckRules(doc) {
			if (x.Rule == "enum" || x.Rule == "range") && (x.Path == at || strings.HasPrefix(x.Path, at+"/")) {
				reasons = append(reasons, fmt.Sprintf("rule %s at %s: %s", x.Rule, x.Path, x.Message))
			}
		}
	}
	const shown = 3
	if len(reasons) > shown {
		reasons = append(reasons[:shown], fmt.Sprintf("%d more", len(reasons)-shown))
	}
	return strings.Join(reasons, "; ")
}

// appendLeaves adds the leaf failures of a validation of the value at ptr.
func appendLeaves(out []string, ve *jsonschema.ValidationError, ptr string) []string {
	if len(ve.Causes) == 0 {
		return append(out, fmt.Sprintf("output schema at %s: %s", ptr+ve.InstanceLocation, ve.Message))
	}
	for _, c := range ve.Causes {
		out = appendLeaves(out, c, ptr)
	}
	return out
}

// maxProbeIndex bounds the array index a probe reply is built with (its
// elements before the value are nulls); past it the step counts as unknown.
const maxProbeIndex = 10000

// schemasAt walks the output schema along segs. It returns the schemas that
// every reply's value at segs must match (nil: none it is sure of), and, for
// each segment, whether it surely indexes an array (the shape of the probe
// reply: a rule path's "*" reaches only array elements).
func (vc *valueCheck) schemasAt(segs []string) ([]*jsonschema.Schema, []bool) {
	arrays := make([]bool, len(segs))
	if vc.root == nil {
		return nil, arrays
	}
	cur := applyingSchemas([]*jsonschema.Schema{vc.root})
	for i, seg := range segs {
		var next []*jsonschema.Schema
		idx, err := strconv.Atoi(seg)
		isIndex := err == nil && idx >= 0
		array, object := allowsType(cur, "array"), allowsType(cur, "object")
		switch {
		case isIndex && array && !object:
			if idx > maxProbeIndex {
				return nil, arrays
			}
			arrays[i] = true
			for _, s := range cur {
				switch {
				case idx < len(s.PrefixItems):
					next = append(next, s.PrefixItems[idx])
				case s.Items2020 != nil:
					next = append(next, s.Items2020)
				}
				switch it := s.Items.(type) { // drafts before 2020-12
				case *jsonschema.Schema:
					next = append(next, it)
				case []*jsonschema.Schema:
					if idx < len(it) {
						next = append(next, it[idx])
					} else if ai, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
						next = append(next, ai)
					}
				}
			}
		case isIndex && array:
			return nil, arrays // an index of an array or a key of an object: cannot tell
		case object:
			for _, s := range cur {
				matched := false
				if p := s.Properties[seg]; p != nil {
					next, matched = append(next, p), true
				}
				for re, p := range s.PatternProperties {
					if re.MatchString(seg) {
						next, matched = append(next, p), true
					}
				}
				if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
					next = append(next, a)
				}
			}
		}
		if len(next) == 0 {
			return nil, arrays
		}
		cur = applyingSchemas(next)
	}
	if dynamic(cur) {
		return nil, arrays
	}
	return cur, arrays
}

// applyingSchemas is ss with every schema that applies to the same value with
// one of them: the one its "$ref" names and the members of its "allOf",
// recursively, each once. anyOf, oneOf and if/then/else branches need not
// apply and are not followed.
func applyingSchemas(ss []*jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] || len(out) >= 256 {
			return
		}
		seen[s] = true
		out = append(out, s)
		for _, a := range s.AllOf {
			walk(a)
		}
		walk(s.Ref)
	}
	for _, s := range ss {
		walk(s)
	}
	return out
}

// allowsType reports whether a value of type kind can match every schema of
// ss as far as their "type" keywords tell ("integer" is a number).
func allowsType(ss []*jsonschema.Schema, kind string) bool {
	for _, s := range ss {
		if len(s.Types) == 0 {
			continue
		}
		ok := false
		for _, t := range s.Types {
			ok = ok || t == kind || t == "integer" && kind == "number"
		}
		if !ok {
			return false
		}
	}
	return true
}

// dynamic reports whether a schema reachable from ss uses $dynamicRef or
// $recursiveRef (what they name depends on where validation started, so a
// subschema validated on its own may judge otherwise than in its place), or
// whether there are too many to tell.
func dynamic(ss []*jsonschema.Schema) bool {
	seen := map[*jsonschema.Schema]bool{}
	stack := append([]*jsonschema.Schema(nil), ss...)
	push := func(xs ...*jsonschema.Schema) {
		for _, x := range xs {
			if x != nil && !seen[x] {
				stack = append(stack, x)
			}
		}
	}
	pushAny := func(x any) {
		switch y := x.(type) {
		case *jsonschema.Schema:
			push(y)
		case []*jsonschema.Schema:
			push(y...)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		if seen[s] = true; len(seen) > 10000 {
			return true
		}
		if s.DynamicRef != nil || s.RecursiveRef != nil {
			return true
		}
		push(s.Ref, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema)
		push(s.AllOf...)
		push(s.AnyOf...)
		push(s.OneOf...)
		push(s.PrefixItems...)
		for _, p := range s.Properties {
			push(p)
		}
		for _, p := range s.PatternProperties {
			push(p)
		}
		for _, p := range s.DependentSchemas {
			push(p)
		}
		for _, p := range s.Dependencies {
			pushAny(p)
		}
		pushAny(s.AdditionalProperties)
		pushAny(s.Items)
		pushAny(s.AdditionalItems)
	}
	return false
}

// probe is a reply that holds just value at segs, with the shape arrays says
// (an array where a segment surely indexes one, else an object), and the
// concrete path of the value in it.
func probe(segs []string, arrays []bool, value any) (doc any, at string) {
	doc = value
	for i := len(segs) - 1; i >= 0; i-- {
		if arrays[i] {
			idx, _ := strconv.Atoi(segs[i])
			arr := make([]any, idx+1)
			arr[idx] = doc
			doc = arr
		} else {
			doc = map[string]any{segs[i]: doc}
		}
	}
	for i, seg := range segs {
		if arrays[i] {
			idx, _ := strconv.Atoi(seg)
			seg = strconv.Itoa(idx)
		}
		at += "/" + strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")
	}
	return doc, at
}

// yamlBooleanWords are the words YAML 1.1 read as booleans; YAML 1.2 (and
// so a suite) reads them as text.
var yamlBooleanWords = []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}

// hint says how to write what was probably meant, "" when it cannot guess:
// the text "yes" where a boolean can be.
func (vc *valueCheck) hint(ptr string, value any) string {
	s, ok := value.(string)
	if !ok {
		return ""
	}
	for _, w := range yamlBooleanWords {
		if s == w && (vc.why(ptr, true) == "" || vc.why(ptr, false) == "") {
			return fmt.Sprintf(" (a suite is YAML 1.2, which reads %s as text: write true or false, unquoted)", s)
		}
	}
	return ""
}
