package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// jsonValues sets, in s (decoded strictly from doc already), the values that
// become JSON — each case's input, reference, expect.equal and expect.one_of
// — to the values as written in doc (see literals.value), and checks each
// expect.length is written as a whole number. It returns the values it
// refuses, naming the field and the line.
func jsonValues(doc *yaml.Node, s *Suite) []string {
	w := literals{seen: map[*yaml.Node]any{}}
	cases := deref(fields(doc)["cases"])
	if cases == nil || cases.Kind != yaml.SequenceNode || len(cases.Content) != len(s.Cases) {
		return nil // the strict decode said what is wrong
	}
	for i, cn := range cases.Content {
		c := &s.Cases[i]
		where := fmt.Sprintf("cases[%d]", i)
		if name := caseName(cn); name != "" {
			where = fmt.Sprintf("cases[%d] (%s)", i, name)
		}
		f := fields(cn)
		if n := f["input"]; n != nil {
			if m, ok := w.value(n, where+".input").(map[string]any); ok {
				c.Input = m
			}
		}
		if n := f["reference"]; n != nil {
			c.Reference = w.value(n, where+".reference")
		}
		ex := fields(f["expect"])
		if c.Expect.Equal == nil {
			c.Expect.Equal = map[string]any{}
		}
		if c.Expect.OneOf == nil {
			c.Expect.OneOf = map[string][]any{}
		}
		for ptr, n := range fields(ex["equal"]) {
			c.Expect.Equal[ptr] = w.value(n, fmt.Sprintf("%s.expect.equal[%s]", where, ptr))
		}
		for ptr, n := range fields(ex["one_of"]) {
			if vs, ok := w.value(n, fmt.Sprintf("%s.expect.one_of[%s]", where, ptr)).([]any); ok {
				c.Expect.OneOf[ptr] = vs
			}
		}
		for ptr, n := range fields(ex["length"]) {
			if n = deref(n); n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
				w.problems = append(w.problems, fmt.Sprintf("%s.expect.length[%s], line %d: %s is not a whole number: write how many items the array must have, like 3",
					where, ptr, n.Line, n.Value))
			}
		}
	}
	return w.problems
}

// leadingZero is an integer written with a leading zero: 0042, -007.
var leadingZero = regexp.MustCompile(`^[-+]?0[0-9]+$`)

// jsonNumberRE is a number as JSON writes it (RFC 8259).
var jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

type literals struct {
	seen     map[*yaml.Node]any // an anchored value is converted (and checked) once
	problems []string
}

// value is node n as the JSON value written: a mapping becomes a
// map[string]any with its keys as written (JSON's keys are text), merges
// (<<: *anchor) applied as YAML applies them; a list []any; a number a
// json.Number of the digits written (12.50 stays 12.50, and
// 123456789012345678901 is not rounded to a float64); and what YAML would
// read as something JSON has not is kept as the text written: an unquoted
// date or time (YAML's !!timestamp; JSON has none, so it would become
// "2025-03-03T00:00:00Z") and an integer written with a leading zero (0042:
// YAML reads it as octal 34, or as 49 for 0049; JSON numbers have no leading
// zeros, so it is an identifier such as an invoice number or a postcode).
// It refuses, naming the line, the numbers YAML reads in a notation JSON has
// not (0x2A, 0o17, 0b101, 1_000, 007.5) and .inf or .nan: whether text or a
// number was meant is for the author to say, by quoting it or writing the
// number in decimal. A quoted, block or explicitly tagged scalar (!!int 0042)
// is read as YAML reads it.
func (w *literals) value(n *yaml.Node, path string) any {
	if n = deref(n); n == nil {
		return nil
	}
	if v, ok := w.seen[n]; ok {
		return v
	}
	var out any
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isMerge(k) {
				merges = append(merges, v)
				continue
			}
			m[k.Value] = w.value(v, path+"."+k.Value)
		}
		// A merged key does not replace one written in the mapping; of
		// several merged mappings, the first that has a key gives it.
		for _, mg := range merges {
			srcs := []*yaml.Node{mg}
			if d := deref(mg); d != nil && d.Kind == yaml.SequenceNode {
				srcs = d.Content
			}
			for _, src := range srcs {
				merged, _ := w.value(src, path).(map[string]any)
				for k, v := range merged {
					if _, set := m[k]; !set {
						m[k] = v
					}
				}
			}
		}
		out = m
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, x := range n.Content {
			list[i] = w.value(x, fmt.Sprintf("%s[%d]", path, i))
		}
		out = list
	case yaml.ScalarNode:
		out = w.scalar(n, path)
	}
	w.seen[n] = out
	return out
}

func (w *literals) scalar(n *yaml.Node, path string) any {
	tag := n.ShortTag()
	if tag == "!!timestamp" { // JSON has no dates: the date as written
		return n.Value
	}
	if n.Style != 0 || (tag != "!!int" && tag != "!!float") {
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value // the strict decode refused it already
		}
		return v
	}
	text := n.Value
	digits := strings.ToLower(strings.TrimLeft(text, "+-"))
	switch {
	case leadingZero.MatchString(text):
		return text
	case strings.Contains(text, "_") || strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0o") || strings.HasPrefix(digits, "0b"):
		var v any
		_ = n.Decode(&v)
		w.problems = append(w.problems, fmt.Sprintf("%s, line %d: %s is read as the number %v: quote it (%q) to keep the text, or write the number in decimal",
			path, n.Line, text, v, text))
	case digits == ".inf" || digits == ".nan":
		w.problems = append(w.problems, fmt.Sprintf("%s, line %d: %s is read as a number JSON cannot hold: quote it (%q) to keep the text",
			path, n.Line, text, text))
	default:
		if num, ok := jsonNumber(text); ok {
			return num
		}
		var v any
		_ = n.Decode(&v)
		w.problems = append(w.problems, fmt.Sprintf("%s, line %d: %s is read as the number %v, which JSON does not write so: quote it (%q) to keep the text, or write the number as JSON does (like 7.5 or 1e3)",
			path, n.Line, text, v, text))
	}
	return nil
}

// jsonNumber is the number YAML text (a plain !!int or !!float in decimal)
// as JSON writes it: the digits as written, without a leading "+", with a 0
// before a leading "." and after a trailing one (.5 is 0.5, 5. is 5.0). ok is
// false when JSON has no such number (007.5).
func jsonNumber(text string) (json.Number, bool) {
	s, sign := strings.TrimPrefix(text, "+"), ""
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		s, sign = rest, "-"
	}
	if strings.HasPrefix(s, ".") {
		s = "0" + s
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && (i+1 == len(s) || s[i+1] < '0' || s[i+1] > '9') {
		s = s[:i+1] + "0" + s[i+1:]
	}
	s = sign + s
	return json.Number(s), jsonNumberRE.MatchString(s)
}

// fields are the key and value nodes of mapping m by key, with those of the
// mappings it merges (<<: *anchor) as YAML applies them: a key written in m
// wins, then the first merged mapping that has it.
func fields(m *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	ps := pairs(m)
	for _, explicit := range []bool{true, false} {
		for _, p := range ps {
			if _, set := out[p[0].Value]; !set && (p[2] != nil) == explicit {
				out[p[0].Value] = p[1]
			}
		}
	}
	return out
}

// pairs are the key and value nodes of mapping m, with those of the mappings
// it merges (<<: *anchor); the third node is non-nil (m) for a pair written
// in m itself.
func pairs(m *yaml.Node) [][3]*yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out [][3]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if isMerge(k) {
			if v = deref(v); v != nil && v.Kind == yaml.SequenceNode {
				for _, x := range v.Content {
					out = append(out, merged(pairs(x))...)
				}
			} else {
				out = append(out, merged(pairs(v))...)
			}
			continue
		}
		out = append(out, [3]*yaml.Node{k, v, m})
	}
	return out
}

// merged marks pairs as merged from another mapping.
func merged(ps [][3]*yaml.Node) [][3]*yaml.Node {
	for i := range ps {
		ps[i][2] = nil
	}
	return ps
}

// isMerge reports whether key node k is YAML's merge key (<<).
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// deref is the node a document or an alias stands for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) == 1:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}
