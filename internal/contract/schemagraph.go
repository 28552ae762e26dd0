package contract

import (
	"reflect"
	"regexp"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaGraph is a compiled schema as the graph validation walks: every
// subschema that can apply to some value, and how it reaches the others. A
// subschema applies either "in place", to the value its parent applies to
// ($ref, allOf, anyOf, oneOf, not, if/then/else, dependentSchemas), or to a
// member or element of it (properties, items, ...), or to a key
// (propertyNames) or a string's decoded content (contentSchema).
type schemaGraph struct {
	nodes []*jsonschema.Schema
	index map[*jsonschema.Schema]int
	edges [][]edge // by node, in the order found
}

// edgeKind says what value a subschema applies to, relative to its parent's.
type edgeKind uint8

const (
	inPlace       edgeKind = iota // the same value
	namedKey                      // the member named key
	patternKey                    // a member whose name matches pattern
	additionalKey                 // a member named in neither properties nor patternProperties
	unevalKey                     // a member nothing else evaluated (unevaluatedProperties)
	prefixIndex                   // the element at index
	restIndex                     // every element past the prefix (items, additionalItems)
	anyIndex                      // any element (contains, unevaluatedItems)
	keyName                       // each member's name, as a string (propertyNames)
	content                       // a string's decoded content (contentSchema)
)

type edge struct {
	kind    edgeKind
	to      int
	key     string         // namedKey
	pattern *regexp.Regexp // patternKey
	index   int            // prefixIndex
}

// newSchemaGraph walks every subschema reachable from root. A $dynamicRef
// (and a $recursiveRef) may apply, at validation, another subschema with the
// same anchor than the one it names: the graph has an edge to each.
func newSchemaGraph(root *jsonschema.Schema) *schemaGraph {
	g := &schemaGraph{index: map[*jsonschema.Schema]int{}}
	var dynamic, recursive []int // nodes with a $dynamicRef, a $recursiveRef
	g.add(root)
	for i := 0; i < len(g.nodes); i++ { // g.nodes grows as the walk finds more
		s := g.nodes[i]
		link := func(kind edgeKind, to *jsonschema.Schema) *edge {
			if to == nil {
				return nil
			}
			g.edges[i] = append(g.edges[i], edge{kind: kind, to: g.add(to)})
			return &g.edges[i][len(g.edges[i])-1]
		}
		link(inPlace, s.Ref)
		if link(inPlace, s.RecursiveRef) != nil {
			recursive = append(recursive, i)
		}
		if link(inPlace, s.DynamicRef) != nil {
			dynamic = append(dynamic, i)
		}
		for _, d := range dynamicAnchors(s) {
			g.add(d)
		}
		link(inPlace, s.Not)
		for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, c := range l {
				link(inPlace, c)
			}
		}
		link(inPlace, s.If)
		link(inPlace, s.Then)
		link(inPlace, s.Else)
		for _, k := range sortedKeys(s.DependentSchemas) {
			link(inPlace, s.DependentSchemas[k])
		}
		for _, k := range sortedKeys(s.Dependencies) {
			if d, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
				link(inPlace, d)
			}
		}
		for _, k := range sortedKeys(s.Properties) {
			link(namedKey, s.Properties[k]).key = k
		}
		patterns := make([]*regexp.Regexp, 0, len(s.PatternProperties))
		for re := range s.PatternProperties {
			patterns = append(patterns, re)
		}
		sort.Slice(patterns, func(a, b int) bool { return patterns[a].String() < patterns[b].String() })
		for _, re := range patterns {
			link(patternKey, s.PatternProperties[re]).pattern = re
		}
		if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			link(additionalKey, a)
		}
		link(unevalKey, s.UnevaluatedProperties)
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			link(restIndex, it)
		case []*jsonschema.Schema:
			for j, c := range it {
				link(prefixIndex, c).index = j
			}
		}
		for j, c := range s.PrefixItems {
			link(prefixIndex, c).index = j
		}
		if a, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			link(restIndex, a)
		}
		link(restIndex, s.Items2020)
		link(anyIndex, s.Contains)
		link(anyIndex, s.UnevaluatedItems)
		link(keyName, s.PropertyNames)
		link(content, s.ContentSchema)
	}
	// Every subschema is known now: a dynamic reference may reach any with
	// its anchor.
	for _, i := range dynamic {
		target := g.nodes[i].DynamicRef
		if target.DynamicAnchor == "" {
			continue
		}
		for j, n := range g.nodes {
			if n.DynamicAnchor == target.DynamicAnchor && n != target {
				g.edges[i] = append(g.edges[i], edge{kind: inPlace, to: j})
			}
		}
	}
	for _, i := range recursive {
		if !g.nodes[i].RecursiveRef.RecursiveAnchor {
			continue
		}
		for j, n := range g.nodes {
			if n.RecursiveAnchor && n != g.nodes[i].RecursiveRef {
				g.edges[i] = append(g.edges[i], edge{kind: inPlace, to: j})
			}
		}
	}
	return g
}

// add returns the node of s, adding it when new.
func (g *schemaGraph) add(s *jsonschema.Schema) int {
	if i, ok := g.index[s]; ok {
		return i
	}
	g.index[s] = len(g.nodes)
	g.nodes = append(g.nodes, s)
	g.edges = append(g.edges, nil)
	return len(g.nodes) - 1
}

// dynamicAnchors returns the subschemas with a $dynamicAnchor that the
// library lists in s (a document or resource root), which a $dynamicRef may
// apply at validation though nothing else refers to them. The list is not
// exported; it is read with reflect (TestRequestSchemaCostFollowsDynamicRefs
// fails if a new version of the library moves it).
func dynamicAnchors(s *jsonschema.Schema) []*jsonschema.Schema {
	if dynamicAnchorsField == nil {
		return nil
	}
	f := reflect.ValueOf(s).Elem().FieldByIndex(dynamicAnchorsField)
	if f.Len() == 0 {
		return nil
	}
	out := make([]*jsonschema.Schema, f.Len())
	for i := range out {
		out[i] = (*jsonschema.Schema)(f.Index(i).UnsafePointer())
	}
	return out
}

// dynamicAnchorsField is the index of the library's list, nil when it has none.
var dynamicAnchorsField = func() []int {
	f, ok := reflect.TypeFor[jsonschema.Schema]().FieldByName("dynamicAnchors")
	if !ok || f.Type != reflect.TypeFor[[]*jsonschema.Schema]() {
		return nil
	}
	return f.Index
}()
