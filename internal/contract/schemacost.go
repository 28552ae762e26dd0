package contract

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A caller's schema can make validating one answer cost far more than the
// schema's size: "$defs" d0…d39 where each is {"allOf": [{"$ref": d(n+1)},
// {"$ref": d(n+1)}]} is 2.6 KB and applies d39 2^40 times to every value.
// So a caller's schema (CompileRequestSchema) is refused when some place in
// an answer (the value itself, or a member, an element, a member of that,
// ...) can have more than MaxSchemaApplications of its subschemas applied
// to it. Validation costs about that many subschemas per value of the
// answer. Ordinary schemas apply a few dozen at most: a subschema used
// under several properties or elements applies to different values, and a
// recursive one ("children": {"items": {"$ref": "#"}}) once per level.
// What the patterns applying at one place cost to match is bounded too
// (MaxSchemaPatternWork, schemamatchcost.go).
// Prompts' schemas are the router's own and are not bounded.
const MaxSchemaApplications = 10_000

// maxCostWork bounds the check itself (subschemas counted at places, steps
// and patterns tried): a schema that needs more is refused as too complex to
// check rather than checked for seconds. Ordinary schemas need a few
// thousand; checking costs about 100 ns a unit.
const maxCostWork = 1_000_000

// costEntry is one subschema applying count times at a place.
type costEntry struct {
	node  int
	count int64
}

// costState is the subschemas applying at one place of an answer, by node.
type costState []costEntry

func (s costState) total() int64 {
	var t int64
	for _, e := range s {
		t = satAdd(t, e.count)
	}
	return t
}

// key identifies what lies below a place where s applies: the subschemas
// of s that lead somewhere (see costCheck.leads), with their counts. Two
// places with the same key have the same places below them, whatever else
// applies at each: {"a":{"$ref":"#"},"b":{"$ref":"#"}, …} leads from each
// member back to what the root leads to, and is explored once, not once a
// member.
func (c *costCheck) key(s costState) string {
	b := make([]byte, 0, len(s)*4)
	for _, e := range s {
		if !c.leads[e.node] {
			continue
		}
		b = binary.AppendUvarint(b, uint64(e.node))
		b = binary.AppendUvarint(b, uint64(e.count))
	}
	return string(b)
}

// satAdd adds, stopping just past MaxSchemaApplications: past it the exact
// number no longer matters.
func satAdd(a, b int64) int64 {
	if a+b > MaxSchemaApplications+1 {
		return MaxSchemaApplications + 1
	}
	return a + b
}

// step is one way down from a place: into a member (named, or a name no
// subschema there names), an element, a member's name or a string's content.
type step struct {
	kind  edgeKind // namedKey, additionalKey (a name no subschema there names), prefixIndex, keyName, content
	key   string
	index int // prefixIndex: the index; past every prefix: the longest prefix's length
}

func (s step) String() string {
	switch s.kind {
	case namedKey:
		return "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(s.key)
	case additionalKey:
		return "/<any other name>"
	case prefixIndex:
		return "/" + strconv.Itoa(s.index)
	case keyName:
		return " (a member's name)"
	default:
		return " (its decoded content)"
	}
}

// costCheck bounds how many subschemas of g apply at one place of any
// answer, or says where an answer can have more applied and which.
type costCheck struct {
	g     *schemaGraph
	order []int         // each node's position in a topological order of in-place edges
	out   []nodeEdges   // each node's edges, by what they apply to
	leads []bool        // whether a node has edges to a member, element, name or content
	match []patternWork // each node's patterns, see MaxSchemaPatternWork
	work  int
}

// nodeEdges is a node's edges by kind: the nodes they lead to.
type nodeEdges struct {
	inPlace     []int
	named       map[string][]int
	patterns    []edge
	additional  []int
	uneval      []int
	prefix      [][]int // by index
	rest, anyIx []int
	keyName     []int
	content     []int
}

// errTooComplex is the error of a schema that needs more than maxCostWork to check.
var errTooComplex = fmt.Errorf("it is too complex to check how many of its subschemas apply to one value of an answer " +
	"(the router bounds that for a schema sent with a request): use fewer properties, patternProperties, nested $ref, allOf, anyOf and oneOf")

// checkCost returns an error naming a place where an answer can have more
// than MaxSchemaApplications subschemas of g applied to it, or patterns
// costing more than MaxSchemaPatternWork to match.
func (g *schemaGraph) checkCost() error {
	c := &costCheck{g: g, out: make([]nodeEdges, len(g.nodes)), leads: make([]bool, len(g.nodes)), match: g.patternWorks()}
	for i, es := range g.edges {
		o := &c.out[i]
		for _, e := range es {
			c.leads[i] = c.leads[i] || e.kind != inPlace
			switch e.kind {
			case inPlace:
				o.inPlace = append(o.inPlace, e.to)
			case namedKey:
				if o.named == nil {
					o.named = map[string][]int{}
				}
				o.named[e.key] = append(o.named[e.key], e.to)
			case patternKey:
				o.patterns = append(o.patterns, e)
			case additionalKey:
				o.additional = append(o.additional, e.to)
			case unevalKey:
				o.uneval = append(o.uneval, e.to)
			case prefixIndex:
				for len(o.prefix) <= e.index {
					o.prefix = append(o.prefix, nil)
				}
				o.prefix[e.index] = append(o.prefix[e.index], e.to)
			case restIndex:
				o.rest = append(o.rest, e.to)
			case anyIndex:
				o.anyIx = append(o.anyIx, e.to)
			case keyName:
				o.keyName = append(o.keyName, e.to)
			case content:
				o.content = append(o.content, e.to)
			}
		}
	}
	c.sortInPlace()
	type place struct {
		state  costState
		parent int // index in places; -1 for the answer itself
		step   step
	}
	var places []place
	// path is the steps from the answer down to places[i], then more.
	path := func(i int, more ...string) []string {
		var p []string
		for j := i; places[j].parent >= 0; j = places[j].parent {
			p = append(p, places[j].step.String())
		}
		slicesReverse(p)
		return append(p, more...)
	}
	places = append(places, place{state: c.closure(map[int]int64{0: 1}), parent: -1})
	if st := places[0].state; st.total() > MaxSchemaApplications {
		return c.tooCostly(st, nil)
	}
	// A place whose patterns cost too much to match is reported only once
	// the rest is checked: a schema that also multiplies its subschemas
	// (which often multiplies its patterns too) or is too complex to check
	// is refused for that, the cause to fix first.
	matchErr := c.tooMuchMatching(places[0].state, func() []string { return nil })
	seen := map[string]bool{c.key(places[0].state): true}
	for i := 0; i < len(places); i++ {
		st := places[i].state
		for _, s := range c.steps(st) {
			next := c.next(st, s)
			if c.work > maxCostWork {
				return errTooComplex
			}
			if len(next) == 0 {
				continue
			}
			// Each place is checked, though one whose key was seen is not
			// explored again: what applies there beyond the key does not
			// lead below it.
			if next.total() > MaxSchemaApplications {
				return c.tooCostly(next, path(i, s.String()))
			}
			if matchErr == nil {
				matchErr = c.tooMuchMatching(next, func() []string { return path(i, s.String()) })
			}
			if k := c.key(next); !seen[k] {
				seen[k] = true
				places = append(places, place{state: next, parent: i, step: s})
			}
		}
	}
	return matchErr
}

func slicesReverse(s []string) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// tooCostly is the error for a place of an answer (the steps of a JSON
// pointer, none for the answer itself) where st applies.
func (c *costCheck) tooCostly(st costState, path []string) error {
	most := st[0]
	for _, e := range st {
		if e.count > most.count {
			most = e
		}
	}
	where := placeName(path)
	return fmt.Errorf("validating an answer against it applies more than %d of its subschemas to one value (%s; %s alone %s): "+
		"$ref, allOf, anyOf, oneOf and if/then/else nested in each other multiply, as does a recursive $ref that applies a definition more than once per level; "+
		"refer to each definition once per level, or use fewer nested $ref, allOf, anyOf and oneOf",
		MaxSchemaApplications, where, schemaPointer(c.g.nodes[most.node].Location), times(most.count))
}

func times(n int64) string {
	if n > MaxSchemaApplications {
		return fmt.Sprintf("more than %d times", MaxSchemaApplications)
	}
	return fmt.Sprintf("%d times", n)
}

// schemaPointer is a subschema's location inside its document: "#/$defs/d3".
func schemaPointer(loc string) string {
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		if loc[i:] == "#" {
			return "the schema's root"
		}
		return loc[i:]
	}
	return loc
}

// sortInPlace orders the nodes so that each comes before those it applies in
// place (a depth-first walk; a cycle, which only a dynamic reference can
// make and validation stops, is cut where the walk meets it again).
func (c *costCheck) sortInPlace() {
	n := len(c.g.nodes)
	c.order = make([]int, n)
	state := make([]uint8, n) // 0 new, 1 on the walk, 2 done
	post := make([]int, 0, n)
	type frame struct{ node, edge int }
	for root := range n {
		if state[root] != 0 {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			es := c.out[f.node].inPlace
			if f.edge == len(es) {
				state[f.node] = 2
				post = append(post, f.node)
				stack = stack[:len(stack)-1]
				continue
			}
			to := es[f.edge]
			f.edge++
			if state[to] == 0 {
				state[to] = 1
				stack = append(stack, frame{to, 0})
			}
		}
	}
	for i, node := range post {
		c.order[node] = n - 1 - i
	}
}

// closure is the subschemas that apply at a place where seeds apply: each,
// and what each applies in place, counted once per way it is reached.
func (c *costCheck) closure(seeds map[int]int64) costState {
	counts := make(map[int]int64, len(seeds))
	var reach []int
	var visit func(int)
	visit = func(n int) {
		if _, ok := counts[n]; ok {
			return
		}
		counts[n] = 0
		reach = append(reach, n)
		for _, to := range c.out[n].inPlace {
			visit(to)
		}
	}
	for _, n := range sortedInts(seeds) {
		visit(n)
	}
	for n, k := range seeds {
		counts[n] = k
	}
	sort.Slice(reach, func(a, b int) bool { return c.order[reach[a]] < c.order[reach[b]] })
	for _, n := range reach {
		for _, to := range c.out[n].inPlace {
			if c.order[to] > c.order[n] {
				counts[to] = satAdd(counts[to], counts[n])
			}
		}
		c.work += 1 + len(c.out[n].inPlace)
	}
	st := make(costState, 0, len(reach))
	for _, n := range reach {
		st = append(st, costEntry{n, counts[n]})
	}
	sort.Slice(st, func(a, b int) bool { return st[a].node < st[b].node })
	return st
}

func sortedInts(m map[int]int64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// steps lists the ways down from a place where st applies that can lead to
// different subschemas: each member name a subschema there names and any
// other, each index a prefix names and one past them all, a member's name
// and a string's content.
func (c *costCheck) steps(st costState) []step {
	var keys []string
	seenKey := map[string]bool{}
	prefix := 0
	var hasName, hasContent bool
	for _, en := range st {
		o := &c.out[en.node]
		for k := range o.named {
			if !seenKey[k] {
				seenKey[k] = true
				keys = append(keys, k)
			}
		}
		c.work += len(o.named)
		prefix = max(prefix, len(o.prefix))
		hasName = hasName || len(o.keyName) > 0
		hasContent = hasContent || len(o.content) > 0
	}
	sort.Strings(keys)
	out := make([]step, 0, len(keys)+prefix+4)
	for _, k := range keys {
		out = append(out, step{kind: namedKey, key: k})
	}
	out = append(out, step{kind: additionalKey})
	for i := 0; i <= prefix; i++ {
		out = append(out, step{kind: prefixIndex, index: i})
	}
	if hasName {
		out = append(out, step{kind: keyName})
	}
	if hasContent {
		out = append(out, step{kind: content})
	}
	return out
}

// next is what applies one step down from a place where st applies. Where
// it cannot tell whether a subschema applies (unevaluatedProperties; for a
// name no subschema names, each pattern and additionalProperties), it
// counts it.
func (c *costCheck) next(st costState, s step) costState {
	seeds := map[int]int64{}
	add := func(to []int, k int64) {
		for _, n := range to {
			seeds[n] = satAdd(seeds[n], k)
		}
	}
	for _, en := range st {
		o, k := &c.out[en.node], en.count
		c.work++
		switch s.kind {
		case namedKey:
			named, matched := o.named[s.key], false
			add(named, k)
			for _, p := range o.patterns {
				c.work += 1 + len(s.key)/16
				if p.pattern.MatchString(s.key) {
					add([]int{p.to}, k)
					matched = true
				}
			}
			if named == nil {
				if !matched {
					add(o.additional, k)
				}
				add(o.uneval, k)
			}
		case additionalKey:
			for _, p := range o.patterns {
				add([]int{p.to}, k)
			}
			add(o.additional, k)
			add(o.uneval, k)
		case prefixIndex:
			if s.index < len(o.prefix) {
				add(o.prefix[s.index], k)
			} else {
				add(o.rest, k)
			}
			add(o.anyIx, k)
		case keyName:
			add(o.keyName, k)
		case content:
			add(o.content, k)
		}
	}
	if len(seeds) == 0 {
		return nil
	}
	return c.closure(seeds)
}
