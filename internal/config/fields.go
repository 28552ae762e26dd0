package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// unknownFields walks a decoded YAML tree against the type it decodes into and
// names every key the type does not have, with its line and the keys that
// exist. yaml's strict mode stops at the first one; a user fixing a file wants
// them all at once.
func unknownFields(n *yaml.Node, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var out []string
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // a type error; the decoder reports it
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if tag == "" {
				tag = strings.ToLower(f.Name)
			}
			fields[tag] = f.Type
			names = append(names, tag)
		}
		slices.Sort(names)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				out = append(out, fmt.Sprintf("line %d: %s is not a known setting (known here: %s)", k.Line, join(path, k.Value), strings.Join(names, ", ")))
				continue
			}
			out = append(out, unknownFields(v, ft, join(path, k.Value))...)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, unknownFields(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))...)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, v := range n.Content {
			out = append(out, unknownFields(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
