package contract

import (
	"slices"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// MayHaveProperties returns, sorted, the top-level names an instance may
// hold by the schema's declarations: those Properties lists, and those
// declared in the branches of its anyOf, oneOf and if/then/else and in its
// dependentSchemas (draft 7: schema "dependencies"), recursively, with what
// applies beside each (a $ref, allOf members). A tagged union declares each
// variant's keys in its own branch, so an instance of one variant lacks the
// other's keys though they are declared; a key a branch requires is still
// one an instance may lack (Required lists only the root's and those
// applying with it). nil when it declares none.
func (s *Schema) MayHaveProperties() []string {
	var names []string
	eachDeclared(s.schema, true, func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	})
	sort.Strings(names)
	return names
}

// eachDeclared calls add with each name root's Properties declare, and those
// of what applies beside it (applying) and of its branches (branches),
// recursively (at most 16 deep and 512 schemas; each once); withIf counts an
// "if" as a branch too (an "if" that holds declares its keys). A name may
// come more than once.
func eachDeclared(root *jsonschema.Schema, withIf bool, add func(name string)) {
	var seen []*jsonschema.Schema
	var collect func(root *jsonschema.Schema, depth int)
	collect = func(root *jsonschema.Schema, depth int) {
		for _, r := range applying(root) {
			if slices.Contains(seen, r) || depth > 16 || len(seen) > 512 {
				continue
			}
			seen = append(seen, r)
			for n := range r.Properties {
				add(n)
			}
			bs := branches(r)
			if withIf && r.If != nil {
				bs = append(bs, r.If)
			}
			for _, b := range bs {
				collect(b, depth+1)
			}
		}
	}
	collect(root, 0)
}
