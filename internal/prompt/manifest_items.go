package prompt

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/yamlwords"
)

// emptyItems reports the items of the manifest's lists written as null (a
// `-` with nothing after it, ~ or null): yaml.v3 drops them without a word,
// so `custom: [~]` loaded as no rule at all and a message meant to be there
// was silently missing. Only the lists of settings are checked: a null in
// rules.enums or in an inline schema is a value.
func emptyItems(top *yaml.Node, report func(string, string, ...any)) {
	check := func(path string, list *yaml.Node) {
		if list = deref(list); list == nil || list.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range list.Content {
			if yamlwords.EmptyItem(item) {
				report(fmt.Sprintf("%s[%d]", path, i), "line %d: the item is empty (a `-` with nothing after it, ~ or null), which YAML would drop without a word: remove it or write its value", deref(item).Line)
			}
		}
	}
	check("messages", field(top, "messages"))
	rules := field(top, "rules")
	for _, name := range []string{"equal", "products", "sums", "custom"} {
		check("rules."+name, field(rules, name))
	}
	if products := deref(field(rules, "products")); products != nil && products.Kind == yaml.SequenceNode {
		for i, p := range products.Content {
			check(fmt.Sprintf("rules.products[%d].factors", i), field(p, "factors"))
		}
	}
}

// deref is n, or the node an alias n names; nil stays nil.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// field is the value of key in the mapping n (its own keys only), or nil.
func field(n *yaml.Node, key string) *yaml.Node {
	if n = deref(n); n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
