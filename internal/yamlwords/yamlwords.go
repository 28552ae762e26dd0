// Package yamlwords holds what the strict YAML decoders of prompt manifests
// (internal/prompt) and conformance suites (conformance) share to turn
// yaml.v3's errors into plain words: what a value is, which top-level field a
// line belongs to, which fields a type has, and whether a document is empty.
// What each file's fields mean stays with its package.
package yamlwords

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Value names a YAML value by its tag, for a message: "a list", "the text
// \"x\"", "the number 5".
func Value(tag, value string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!str":
		return fmt.Sprintf("the text %q", value)
	case "!!null":
		return "null"
	case "!!float", "!!int":
		return "the number " + value
	}
	return fmt.Sprintf("%s %s", strings.TrimPrefix(tag, "!!"), value)
}

// TopFieldAt names the top-level field of the mapping top whose value spans
// line.
func TopFieldAt(top *yaml.Node, line int) string {
	name := ""
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Line <= line {
			name = top.Content[i].Value
		}
	}
	return name
}

// Fields lists the YAML keys of struct type t, sorted.
func Fields(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	sort.Strings(names)
	return names
}

// EmptyDocument reports whether a YAML document holds nothing: no node, or
// one null scalar with no text (what "---" alone at the end of a file reads
// as).
func EmptyDocument(d *yaml.Node) bool {
	if len(d.Content) == 0 {
		return true
	}
	n := d.Content[0]
	return len(d.Content) == 1 && n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == ""
}

// EmptyItem reports a list item written as null: a `-` line with nothing
// after it, ~ or null (an alias to one included). yaml.v3 drops such an item
// from a list it decodes without a word, so the configuration and the prompt
// manifests refuse it, naming it.
func EmptyItem(v *yaml.Node) bool {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null"
}

// GoType names, for the author of a YAML file, what the Go type t (as
// yaml.v3's type errors spell it: "int", "[]string", "*prompt.Rules") expects.
// named gives the words of a package's own types, looked up first; a type of
// one of packages ("prompt.", "contract.") is a mapping.
func GoType(t string, named map[string]string, packages ...string) string {
	t = strings.TrimPrefix(t, "*")
	if w, ok := named[t]; ok {
		return w
	}
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	}
	for _, p := range packages {
		if strings.HasPrefix(t, p) {
			return "a mapping"
		}
	}
	return t
}
