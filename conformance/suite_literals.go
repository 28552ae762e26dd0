package conformance

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeLiterally decodes suite file b into s again, with the values JSON
// would not get as written kept as their text (keepLiterals), and returns
// the values it refuses. b has been decoded strictly already: this decode
// only changes values.
func decodeLiterally(b []byte, s *Suite) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 { // an empty file
		return nil, nil
	}
	problems := keepLiterals(&doc)
	var again Suite
	if err := doc.Decode(&again); err != nil {
		return nil, err
	}
	*s = again
	return problems, nil
}

// keepLiterals goes through the values that become JSON — each case's
// input, reference, expect.equal and expect.one_of — and keeps as the text
// written what YAML would read as something else: an unquoted date or time
// (YAML's !!timestamp; JSON has none, so it would become
// "2025-03-03T00:00:00Z") and an integer written with a leading zero (0042:
// YAML reads it as octal 34, or as 49 for 0049; JSON numbers have no leading
// zeros, so it is an identifier such as an invoice number or a postcode).
// Mapping keys are kept as written too (JSON's keys are strings). It refuses,
// naming the line, the numbers YAML reads in a notation JSON has not (0x2A,
// 0o17, 0b101, 1_000) and .inf or .nan: whether text or a number was meant
// is for the author to say, by quoting it or writing the number in decimal.
// A quoted, block or explicitly tagged scalar (!!int 0042) is read as YAML
// reads it.
func keepLiterals(doc *yaml.Node) []string {
	w := literals{seen: map[*yaml.Node]bool{}}
	for _, f := range pairs(doc) {
		if f[0].Value != "cases" {
			continue
		}
		cases := deref(f[1])
		if cases == nil || cases.Kind != yaml.SequenceNode {
			continue // the decode says what is wrong
		}
		for i, c := range cases.Content {
			where := fmt.Sprintf("cases[%d]", i)
			for _, g := range pairs(c) {
				if g[0].Value == "name" && deref(g[1]) != nil && deref(g[1]).Value != "" {
					where = fmt.Sprintf("cases[%d] (%s)", i, deref(g[1]).Value)
				}
			}
			for _, g := range pairs(c) {
				switch g[0].Value {
				case "input", "reference":
					w.value(g[1], where+"."+g[0].Value)
				case "expect":
					for _, e := range pairs(g[1]) {
						if e[0].Value != "equal" && e[0].Value != "one_of" {
							continue
						}
						for _, x := range pairs(e[1]) {
							w.value(x[1], fmt.Sprintf("%s.expect.%s[%s]", where, e[0].Value, x[0].Value))
						}
					}
				}
			}
		}
	}
	return w.problems
}

// leadingZero is an integer written with a leading zero: 0042, -007.
var leadingZero = regexp.MustCompile(`^[-+]?0[0-9]+$`)

type literals struct {
	seen     map[*yaml.Node]bool // anchored values are checked once
	problems []string
}

func (w *literals) value(n *yaml.Node, path string) {
	if n = deref(n); n == nil || w.seen[n] {
		return
	}
	w.seen[n] = true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				w.value(v, path)
				continue
			}
			if k.Kind == yaml.ScalarNode && k.Style&yaml.TaggedStyle == 0 {
				k.Tag = "!!str"
			}
			w.value(v, path+"."+k.Value)
		}
	case yaml.SequenceNode:
		for i, x := range n.Content {
			w.value(x, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		w.scalar(n, path)
	}
}

func (w *literals) scalar(n *yaml.Node, path string) {
	if n.Tag == "!!timestamp" { // JSON has no dates: the date as written
		n.Tag = "!!str"
		return
	}
	if n.Style != 0 || (n.Tag != "!!int" && n.Tag != "!!float") {
		return
	}
	text := n.Value
	digits := strings.ToLower(strings.TrimLeft(text, "+-"))
	switch {
	case leadingZero.MatchString(text):
		n.Tag = "!!str"
	case strings.Contains(text, "_") || strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0o") || strings.HasPrefix(digits, "0b"):
		var v any
		_ = n.Decode(&v)
		w.problems = append(w.problems, fmt.Sprintf("%s, line %d: %s is read as the number %v: quote it (%q) to keep the text, or write the number in decimal",
			path, n.Line, text, v, text))
	case digits == ".inf" || digits == ".nan":
		w.problems = append(w.problems, fmt.Sprintf("%s, line %d: %s is read as a number JSON cannot hold: quote it (%q) to keep the text",
			path, n.Line, text, text))
		n.Tag = "!!str" // refused already: not once more by json.Marshal
	}
}

// pairs are the key and value nodes of mapping m, with those of the mappings
// it merges (<<: *anchor).
func pairs(m *yaml.Node) [][2]*yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			if v = deref(v); v != nil && v.Kind == yaml.SequenceNode {
				for _, x := range v.Content {
					out = append(out, pairs(x)...)
				}
			} else {
				out = append(out, pairs(v)...)
			}
			continue
		}
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out
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
