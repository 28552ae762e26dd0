package prompt

import (
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/contract"
)

// exactEnums re-reads the values of rules.enums from the manifest's YAML
// nodes as written (contract.YAMLValue). Decoded into []any by YAML's own
// type rules, an unquoted 2024-01-01 becomes a time.Time that no output's
// string equals, so that every output fails the rule, and a number of more
// than 17 significant digits is rounded to a float64, so that the listed
// number is refused and a different one accepted. Ranges need no pass here:
// contract.Range decodes its bounds as written itself. top is the manifest's
// mapping; rules is what strict decoding made of it.
//
// The lists are found by decoding top again, with yaml.v3 itself, into
// exactList values: a list reached through a merge key (<<: *base, in
// rules.enums or in rules) or an alias is where YAML puts it, with YAML's
// precedence, as in rules. Read by walking the nodes, a merged list kept
// YAML's types.
func exactEnums(top *yaml.Node, rules *contract.Rules, report func(string, string, ...any)) {
	if rules.Enums == nil {
		return
	}
	var exact struct {
		Rules struct {
			Enums map[string]*exactList `yaml:"enums"`
		} `yaml:"rules"`
	}
	// What this decoding refuses, strict decoding has reported; what it
	// leaves out (a mapping with a repeated key), strict decoding has too.
	_ = top.Decode(&exact)
	for _, key := range slices.Sorted(maps.Keys(exact.Rules.Enums)) {
		l := exact.Rules.Enums[key]
		vals, ok := rules.Enums[key]
		if l == nil || !ok || len(l.vals) != len(vals) {
			continue // null or refused by decoding (reported there)
		}
		for _, err := range l.errs {
			report("rules.enums["+key+"]", "%v", err)
		}
		for j, x := range l.vals {
			if l.read[j] {
				vals[j] = x
			}
		}
	}
}

// exactList is one enum's list of values read as written.
type exactList struct {
	vals []any
	read []bool // vals[j] was read; otherwise errs says why not
	errs []error
}

// UnmarshalYAML reads a list's values with contract.YAMLValue. A value that
// is not a list is left to strict decoding, which refuses it.
func (l *exactList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return nil
	}
	l.vals = make([]any, len(n.Content))
	l.read = make([]bool, len(n.Content))
	for j, item := range n.Content {
		x, err := contract.YAMLValue(item)
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		l.vals[j], l.read[j] = x, true
	}
	return nil
}
