package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// dropDuplicateKeys reports every key written twice in one mapping, anywhere
// in the document, and removes the later copies from the tree. yaml.v3
// refuses duplicates too, but it then decodes nothing of the mapping that
// holds one: a repeated top-level key hid every other problem of the file,
// and only the first duplicate was named. Keeping the first copy lets the
// rest of the file be decoded and checked, for the one message.
func dropDuplicateKeys(n *yaml.Node) []string {
	var out []string
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.AliasNode:
			walk(n.Alias, path)
		case yaml.SequenceNode:
			for i, v := range n.Content {
				walk(v, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.MappingNode:
			kept := n.Content[:0:0]
			first := map[[2]any]*yaml.Node{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				id := [2]any{k.Kind, k.Value} // yaml.v3's test of equal keys
				if f, dup := first[id]; dup {
					out = append(out, fmt.Sprintf("line %d: %s is written twice (first at line %d): keep one; the router does not let a later copy silently override the first", k.Line, join(path, k.Value), f.Line))
					continue
				}
				first[id] = k
				kept = append(kept, k, v)
				walk(v, join(path, k.Value))
			}
			n.Content = kept
		}
	}
	walk(n, "")
	return out
}
