package contract

import (
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// maxVariantWalks bounds how many variants declared follows for one path
// (each key several branches declare forks the walk): past it, the schema
// cannot tell. Load time only; a union has a handful of variants.
const maxVariantWalks = 64

// branchKey is what the branches of a place in the schema say of one key.
type branchKey struct {
	alts  []*jsonschema.Schema // the schemas the branches that declare the key give it: one of them applies, if any
	names []string             // every key the branches declare
	open  bool                 // a branch admits keys it does not name (patternProperties, additionalProperties true or a schema)
}

// inBranches looks seg up in the branches (see branches: anyOf, oneOf, then,
// else, dependent schemas) of the schemas of cur, and in theirs, recursively
// and bounded as extraKeys is: the keys no_extra_keys counts as declared.
func inBranches(cur []*jsonschema.Schema, seg string) branchKey {
	var u branchKey
	var seen []*jsonschema.Schema
	var collect func(b *jsonschema.Schema, depth int)
	collect = func(b *jsonschema.Schema, depth int) {
		for _, r := range applying(b) {
			if slices.Contains(seen, r) || depth > 16 || len(seen) > 512 {
				continue
			}
			seen = append(seen, r)
			if p := r.Properties[seg]; p != nil && !slices.Contains(u.alts, p) {
				u.alts = append(u.alts, p)
			}
			for n := range r.Properties {
				if !slices.Contains(u.names, n) {
					u.names = append(u.names, n)
				}
			}
			switch a := r.AdditionalProperties.(type) {
			case bool:
				u.open = u.open || a
			case *jsonschema.Schema:
				u.open = true
			}
			u.open = u.open || len(r.PatternProperties) > 0
			for _, c := range branches(r) {
				collect(c, depth+1)
			}
		}
	}
	for _, r := range cur {
		for _, b := range branches(r) {
			collect(b, 1)
		}
	}
	return u
}

// closed reports whether a schema of ss has "additionalProperties": false,
// which refuses every key its own "properties" do not name, whatever a
// branch beside it declares.
func closed(ss []*jsonschema.Schema) bool {
	for _, r := range ss {
		if a, ok := r.AdditionalProperties.(bool); ok && !a {
			return true
		}
	}
	return false
}

// throughBranches walks rest from a key the branches of a union declare, alts
// being the schemas they give it. The path is declared if it is in one of
// the variants (the error is the first variant's otherwise), and what it
// ends at is what those variants allow together: for one, its schemas; for
// several, a schema of the union of their types (nil when one cannot tell),
// which is all the rules' checks read (allows, typeWords, kindsAllowed).
func throughBranches(alts []*jsonschema.Schema, rest []string, at string, budget *int) ([]*jsonschema.Schema, error) {
	if len(alts) == 1 {
		return declaredFrom(applying(alts[0]), rest, at, budget)
	}
	var ends [][]*jsonschema.Schema
	var first error
	for _, a := range alts {
		if *budget <= 0 {
			return nil, nil // too many variants to follow: cannot tell
		}
		*budget--
		end, err := declaredFrom(applying(a), rest, at, budget)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		ends = append(ends, end)
	}
	if len(ends) == 0 {
		return nil, first
	}
	if len(ends) == 1 {
		return ends[0], nil
	}
	var kinds []string
	for _, end := range ends {
		k := kindsAllowed(end)
		if k == nil {
			return nil, nil
		}
		for _, x := range k {
			if !slices.Contains(kinds, x) {
				kinds = append(kinds, x)
			}
		}
	}
	if len(kinds) == 0 {
		return nil, nil
	}
	return []*jsonschema.Schema{{Types: kinds}}, nil
}
