package config

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// keyProblem says what is wrong with the key k of a mapping at path, or ""
// when nothing is. yaml.v3 drops an entry whose key is null from a map
// without a word (routes: {~: …} — or null:, Null:, NULL:, or a key left
// empty — is a route that silently does not exist), and refuses a list or
// mapping written as a key (`? [a]`) only as "cannot unmarshal !!seq into
// string", with a line but no setting. A null key of a struct is an unknown
// setting, unknownFields' to report; inMap says n decodes into a map.
func keyProblem(k *yaml.Node, path string, inMap bool) string {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	what := "a setting's name"
	if inMap {
		what = keyNoun(path)
	}
	where := path
	if where == "" {
		where = "the configuration"
	}
	switch {
	case k.Kind == yaml.MappingNode || k.Kind == yaml.SequenceNode:
		kind := "a list"
		if k.Kind == yaml.MappingNode {
			kind = "a mapping"
		}
		return fmt.Sprintf("line %d: %s: %s is %s (a complex key, written with ? or as [ ] or { } before the colon): write the name as text, e.g. \"name\": …", k.Line, where, what, kind)
	case inMap && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!null":
		written := "left empty"
		if k.Value != "" {
			written = "written " + k.Value
		}
		quoted := k.Value
		if quoted == "" {
			quoted = "null"
		}
		return fmt.Sprintf("line %d: %s: %s is null (%s, which YAML reads as no name), so the entry would be silently dropped: quote it (%s) or rename it", k.Line, where, what, written, strconv.Quote(quoted))
	}
	return ""
}

// keyNoun is what the keys of the map at path name.
func keyNoun(path string) string {
	if path == "routes" {
		return "a route's name"
	}
	return "a key"
}
