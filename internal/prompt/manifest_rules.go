package prompt

import (
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
func exactEnums(top *yaml.Node, rules *contract.Rules, report func(string, string, ...any)) {
	enums := mappingValue(mappingValue(top, "rules"), "enums")
	if enums == nil || rules.Enums == nil {
		return
	}
	for i := 0; i+1 < len(enums.Content); i += 2 {
		key, list := enums.Content[i].Value, deref(enums.Content[i+1])
		vals, ok := rules.Enums[key]
		if !ok || list.Kind != yaml.SequenceNode || len(list.Content) != len(vals) {
			continue // refused by decoding, or a repeated key (reported there)
		}
		for j, item := range list.Content {
			x, err := contract.YAMLValue(item)
			if err != nil {
				report("rules.enums["+key+"]", "%v", err)
				continue
			}
			vals[j] = x
		}
	}
}

// mappingValue is the value of key in mapping n (through aliases), or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
