package prompt

import (
	"math/bits"
	"reflect"
	"slices"
	"text/template/parse"
)

// rangeStartFunc is the function called with the value a range goes over
// before its first iteration (countRangeStarts): it counts the work of
// starting the range (rangeStartSteps) and returns the value. Templates
// cannot call it by name, as stepFunc.
const rangeStartFunc = "routerRangeStart"

// rangeStartSteps is the steps of starting a range over v. A range over an
// object (a map) sorts all its keys before the first iteration, whatever
// the number of iterations run: {{ range $k, $v := $.obj }}{{ break }}{{ end }}
// (is any key present, the first entry) in a range over another array of the
// input costs len(items) sorts of len(obj) keys while counting two steps per
// item, and a 1 MiB body kept a render busy for hours. It counts a step per
// key, and one more per 16 keys for each doubling of their number (the sort
// compares about n·log₂n pairs): measured against the slowest step (eq on a
// pair), a sort costs 0.5 to 0.8 of one per key up to 4,000 keys, 1.3 to
// 1.8 at 40,000, and 2 steps a key are counted there. Any other value (an
// array, an empty object, null) costs nothing to start: its iterations
// count.
func rangeStartSteps(v any) int {
	if m := reflect.ValueOf(v); m.Kind() == reflect.Map {
		n := m.Len()
		return n + n*bits.Len(uint(n))/16
	}
	return 0
}

// countRangeStarts puts before each range in l a call counting the work of
// starting it (rangeStartNode).
func countRangeStarts(l *parse.ListNode) {
	isRange := func(n parse.Node) bool { _, ok := n.(*parse.RangeNode); return ok }
	if !slices.ContainsFunc(l.Nodes, isRange) {
		return
	}
	nodes := make([]parse.Node, 0, len(l.Nodes)+1)
	for _, n := range l.Nodes {
		if r, ok := n.(*parse.RangeNode); ok {
			nodes = append(nodes, rangeStartNode(r)...)
			continue
		}
		nodes = append(nodes, n)
	}
	l.Nodes = nodes
}

// rangeStartNode returns what replaces r to count the work of starting it:
// {{ if PIPELINE | routerRangeStart }}{{ end }}, r's pipeline without its
// variables, then r. The pipeline is evaluated twice, its field reads and
// functions (counted) alike, and each error it fails with is the same, at
// the same place. Unless it assigns a variable in parentheses
// ({{ range ($acc = printf "%s+" $acc) }}), which must happen once: then r's
// own pipeline ends with the call, and an error of the range itself ("range
// can't iterate over") names routerRangeStart.
func rangeStartNode(r *parse.RangeNode) []parse.Node {
	if r.Pipe == nil || len(r.Pipe.Cmds) == 0 {
		return []parse.Node{r}
	}
	if assigns(r.Pipe.Cmds) {
		r.Pipe.Cmds = append(slices.Clip(r.Pipe.Cmds), funcCommand(rangeStartFunc, r.Pipe.Pos))
		return []parse.Node{r}
	}
	cmds := append(slices.Clone(r.Pipe.Cmds), funcCommand(rangeStartFunc, r.Pipe.Pos))
	return []parse.Node{emptyIf(r.Pos, r.Line, cmds), r}
}

// assigns reports whether cmds declare or assign a variable (in a
// parenthesized pipeline).
func assigns(cmds []*parse.CommandNode) bool {
	found := false
	for _, c := range cmds {
		inspect(c, true, func(n parse.Node, _ bool) bool {
			if p, ok := n.(*parse.PipeNode); ok && len(p.Decl) > 0 {
				found = true
			}
			return !found
		})
	}
	return found
}
