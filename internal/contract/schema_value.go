package contract

import (
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ValueFailure is one leaf failure of a value judged by CheckValueAt: where
// in the value it is (the schema library's instance location relative to the
// value: "" for the value itself, else a pointer such as "/2/name") and what
// is wrong.
type ValueFailure struct {
	Location string
	Message  string
}

// MaxValueIndex bounds the array index CheckValueAt steps through (a probe
// document holding a value at it has that many elements before it); past it
// the step counts as one the schema cannot tell.
const MaxValueIndex = 10000

// CheckValueAt judges value (decoded as by ParseJSON) as the value at the
// JSON pointer segments segs of a document, against the compiled schema: it
// returns the leaf failures of value against every subschema that surely
// applies there, nil when none fails or when the schema cannot tell.
//
// It refuses only what is certain. It follows "properties",
// "patternProperties", "additionalProperties", "items", "prefixItems" and
// "additionalItems" along the way, with "$ref" and "allOf", never an
// anyOf/oneOf branch or if/then/else, which need not apply; a segment that
// may index an array or name a key of an object, or leads nowhere the schema
// describes, ends the judgement, as does a schema using $dynamicRef or
// $recursiveRef where the pointer ends (what they name depends on where
// validation started, so a subschema validated on its own may judge otherwise
// than in its place).
//
// arrays says, for each segment, whether it surely indexes an array (false
// from a step the schema cannot tell on): the shape of a document that holds
// just value at segs, for judging rules on it.
func (s *Schema) CheckValueAt(segs []string, value any) (failures []ValueFailure, arrays []bool) {
	schemas, arrays := s.schemasAt(segs)
	for _, sub := range schemas {
		var ve *jsonschema.ValidationError
		if err := sub.Validate(value); errors.As(err, &ve) {
			failures = appendValueLeaves(failures, ve)
		}
	}
	return failures, arrays
}

// appendValueLeaves adds the leaf failures of a validation error tree.
func appendValueLeaves(out []ValueFailure, ve *jsonschema.ValidationError) []ValueFailure {
	if len(ve.Causes) == 0 {
		return append(out, ValueFailure{Location: ve.InstanceLocation, Message: ve.Message})
	}
	for _, c := range ve.Causes {
		out = appendValueLeaves(out, c)
	}
	return out
}

// schemasAt walks the schema along segs. It returns the schemas that every
// value at segs must match (nil: none it is sure of), and, for each segment,
// whether it surely indexes an array.
func (s *Schema) schemasAt(segs []string) ([]*jsonschema.Schema, []bool) {
	arrays := make([]bool, len(segs))
	if s == nil || s.schema == nil {
		return nil, arrays
	}
	cur := applyingAll([]*jsonschema.Schema{s.schema})
	for i, seg := range segs {
		var next []*jsonschema.Schema
		idx, isIndex := ArrayIndex(seg) // RFC 6901: not "01" or "+1"
		array, object := allows(cur, "array"), allows(cur, "object")
		switch {
		case isIndex && array && !object:
			if idx > MaxValueIndex {
				return nil, arrays
			}
			arrays[i] = true
			for _, r := range cur {
				switch {
				case idx < len(r.PrefixItems):
					next = append(next, r.PrefixItems[idx])
				case r.Items2020 != nil:
					next = append(next, r.Items2020)
				}
				switch it := r.Items.(type) { // drafts before 2020-12
				case *jsonschema.Schema:
					next = append(next, it)
				case []*jsonschema.Schema:
					if idx < len(it) {
						next = append(next, it[idx])
					} else if ai, ok := r.AdditionalItems.(*jsonschema.Schema); ok {
						next = append(next, ai)
					}
				}
			}
		case isIndex && array:
			return nil, arrays // an index of an array or a key of an object: cannot tell
		case object:
			for _, r := range cur {
				matched := false
				if p := r.Properties[seg]; p != nil {
					next, matched = append(next, p), true
				}
				for re, p := range r.PatternProperties {
					if re.MatchString(seg) {
						next, matched = append(next, p), true
					}
				}
				if a, ok := r.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
					next = append(next, a)
				}
			}
		}
		if len(next) == 0 {
			return nil, arrays
		}
		cur = applyingAll(next)
	}
	if usesDynamicRef(cur) {
		return nil, arrays
	}
	return cur, arrays
}

// usesDynamicRef reports whether a schema reachable from ss uses $dynamicRef
// or $recursiveRef, or whether there are too many to tell.
func usesDynamicRef(ss []*jsonschema.Schema) bool {
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
