package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/yamlwords"
)

// wrongTypes walks the YAML tree against the type it decodes into and reports
// every value of the wrong type once, naming the setting's path and what it
// expects ("line 4: routes.default.max_inflight: "two" is not an integer").
// yaml.v3's own words for it ("cannot unmarshal !!str `two` into int") name a
// Go type and only a line, and the value it fails on still reaches the
// written-zeros check as a zero the file never wrote. So each wrong value is
// removed from the tree here, as if left out: the decode that follows neither
// reports it again nor reads it as 0, and the setting is judged only by this
// message. Whether a scalar fits is decided by yaml.v3 itself (the node is
// decoded into the field's type), so nothing accepted before is refused now,
// except a fraction written for an integer, which yaml.v3 truncates.
func wrongTypes(n *yaml.Node, t reflect.Type) []string {
	w := typeWalker{seen: map[visit]bool{}}
	w.check(n, t, "")
	return w.out
}

type typeWalker struct {
	seen map[visit]bool // node and type → whether the value fits
	out  []string
}

// check reports whether n fits t, reporting it (once) when it does not, and
// removes the wrong values inside it.
func (w *typeWalker) check(n *yaml.Node, t reflect.Type, path string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if ok, done := w.seen[visit{n, t}]; done {
		return ok
	}
	w.seen[visit{n, t}] = true // a cycle through aliases is yaml.v3's to refuse
	ok := w.fits(n, t, path)
	w.seen[visit{n, t}] = ok
	return ok
}

func (w *typeWalker) fits(n *yaml.Node, t reflect.Type, path string) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return true // left empty: the setting's zero, as if left out
	}
	bad := func(expected string) bool {
		where := path
		if where == "" {
			where = "the configuration"
		}
		w.out = append(w.out, fmt.Sprintf("line %d: %s: %s %s", n.Line, where, written(n), expected))
		return false
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			if t == reflect.TypeOf(Duration(0)) {
				return bad(durationProblem(n.Value))
			}
			return bad("is not a valid value")
		}
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad("is not a mapping of settings (write them indented below, or as {key: value, ...})")
		}
		fields, _ := structFields(t)
		w.mapping(n, path, false, func(key string) (reflect.Type, bool) { ft, ok := fields[key]; return ft, ok })
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad("is not a mapping (write name: value entries, indented below)")
		}
		w.mapping(n, path, true, func(string) (reflect.Type, bool) { return t.Elem(), true })
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad("is not a list (write its items as - item lines, or as [a, b])")
		}
		kept := n.Content[:0:0]
		for i, v := range n.Content {
			if yamlwords.EmptyItem(v) {
				// yaml.v3 drops it without a word: a provider, an API key or a
				// route's fallback meant to be there would be silently missing.
				w.out = append(w.out, fmt.Sprintf("line %d: %s[%d] is empty: remove the `-` line or write the entry", v.Line, path, i))
				continue
			}
			if w.check(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)) {
				kept = append(kept, v)
			}
		}
		n.Content = kept
	default:
		if n.Kind != yaml.ScalarNode {
			return bad(expects(t))
		}
		quotedBool(n, t)
		if err := n.Decode(reflect.New(t).Interface()); err != nil || fraction(n, t) || overflows(n, t) {
			if isInteger(t) {
				return bad(integerProblem(n.Value, t, fraction(n, t)))
			}
			return bad(expects(t))
		}
	}
	return true
}

// mapping checks each value of the mapping n (and of the mappings its merge
// keys bring in) against the type fieldType gives its key, dropping the
// entries whose value does not fit, and those whose key is no name
// (keyProblem; inMap says n decodes into a map). Unknown keys are
// unknownFields' to report.
func (w *typeWalker) mapping(n *yaml.Node, path string, inMap bool, fieldType func(string) (reflect.Type, bool)) {
	kept := n.Content[:0:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, m := range merged {
				if m.Kind == yaml.AliasNode && m.Alias != nil {
					m = m.Alias
				}
				if m.Kind == yaml.MappingNode && !w.seen[visit{m, nil}] {
					w.seen[visit{m, nil}] = true
					w.mapping(m, path, inMap, fieldType)
				}
			}
			kept = append(kept, k, v)
			continue
		}
		if p := keyProblem(k, path, inMap); p != "" {
			w.out = append(w.out, p)
			continue
		}
		if ft, ok := fieldType(k.Value); ok && !w.check(v, ft, join(path, k.Value)) {
			continue
		}
		kept = append(kept, k, v)
	}
	n.Content = kept
}

// expects says what a scalar of kind t must be.
func expects(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "is not an integer (write it in digits, without a unit or suffix)"
	case reflect.Float32, reflect.Float64:
		return "is not a number"
	case reflect.Bool:
		return "is not true or false"
	}
	return "is not text (write one value, in quotes if it holds \": \" or braces)"
}

// written shows the value the file wrote: a scalar quoted, else its kind.
func written(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// fraction reports an integer setting written with a fractional part, which
// yaml.v3 would silently truncate (max_inflight: 2.5 became 2).
func fraction(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.String, reflect.Bool:
		return false
	}
	if n.ShortTag() != "!!float" {
		return false
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	return err != nil || f != math.Trunc(f)
}

// quotedBool reads a quoted "true" or "false" for a true/false setting as
// the unquoted word. yaml.v3 decodes a quoted 'no' or 'off' into a bool (its
// YAML 1.1 words) but refused a quoted 'false' ("is not true or false"):
// templating tools often quote every value, and the two were inconsistent.
func quotedBool(n *yaml.Node, t reflect.Type) {
	if t.Kind() != reflect.Bool || n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
		return
	}
	switch n.Value {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		n.Tag, n.Style = "!!bool", 0
	}
}
