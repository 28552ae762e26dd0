package contract

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// extraKeys works out, for no_extra_keys, which top-level keys an output may
// have: those declared in "properties" of the root and of every schema that
// applies with it (see applying: beside a $ref, allOf members), and those
// declared in the branches of its anyOf, oneOf and if/then/else and in its
// dependentSchemas (and draft 7's schema "dependencies"), recursively: a
// tagged union declares each variant's keys in its own branch, and a
// dependent schema the keys that come with the key it depends on. It returns the declared keys and the load-time problems of a
// schema that no output could match with no_extra_keys on: a required key
// declared nowhere, and an anyOf or oneOf every branch of which requires one.
func extraKeys(s *Schema) (declared map[string]bool, problems []error) {
	declared = map[string]bool{}
	eachDeclared(s.schema, false, func(n string) { declared[n] = true })

	fix := `declare it in the output schema's top-level "properties" (or in the properties of the branch that requires it), or set no_extra_keys: false`
	for _, n := range s.Required() {
		if !declared[n] {
			problems = append(problems, fmt.Errorf("the output schema requires the key %q but does not declare it in \"properties\", so no_extra_keys would refuse every output that has it and the schema every output that lacks it; %s", n, fix))
		}
	}
	for _, r := range applying(s.schema) {
		for _, u := range []struct {
			name string
			list []*jsonschema.Schema
		}{{"anyOf", r.AnyOf}, {"oneOf", r.OneOf}} {
			if len(u.list) == 0 {
				continue
			}
			var missing []string
			for _, b := range u.list {
				m := undeclaredRequired(b, declared)
				if len(m) == 0 {
					missing = nil
					break
				}
				missing = append(missing, m[0])
			}
			if len(missing) > 0 {
				problems = append(problems, fmt.Errorf("every branch of the output schema's %s requires a key declared in no \"properties\" (%s), so no output could pass both the schema and no_extra_keys; %s", u.name, strings.Join(missing, ", "), fix))
			}
		}
	}
	return declared, problems
}

// branches lists the schemas of r's anyOf, oneOf, then and else, and of its
// dependentSchemas and schema "dependencies" (by name): each may declare keys
// an output that passes the schema has.
func branches(r *jsonschema.Schema) []*jsonschema.Schema {
	out := append(append([]*jsonschema.Schema(nil), r.AnyOf...), r.OneOf...)
	if r.Then != nil {
		out = append(out, r.Then)
	}
	if r.Else != nil {
		out = append(out, r.Else)
	}
	for _, k := range sortedKeys(r.DependentSchemas) {
		out = append(out, r.DependentSchemas[k])
	}
	for _, k := range sortedKeys(r.Dependencies) {
		if d, ok := r.Dependencies[k].(*jsonschema.Schema); ok {
			out = append(out, d)
		}
	}
	return out
}

// undeclaredRequired lists, sorted, the names a branch requires (itself or
// the schemas applying with it) that are not declared.
func undeclaredRequired(b *jsonschema.Schema, declared map[string]bool) []string {
	var out []string
	for _, r := range applying(b) {
		for _, n := range r.Required {
			if !declared[n] && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}
