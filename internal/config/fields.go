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
// them all at once. Merge keys (`<<: *anchor`, or `<<: [*a, *b]`) are resolved
// as yaml.v3 resolves them: the merged mappings' keys are checked as if written
// in place. A node reached twice through aliases is reported once.
func unknownFields(n *yaml.Node, t reflect.Type, path string) []string {
	w := fieldWalker{seen: map[visit]bool{}}
	w.walk(n, t, path)
	return w.out
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

type fieldWalker struct {
	seen map[visit]bool
	out  []string
}

func (w *fieldWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || w.seen[visit{n, t}] {
		return
	}
	w.seen[visit{n, t}] = true
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // a type error; the decoder reports it
		}
		fields, names := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isMerge(k) {
				w.merge(v, t, path)
				continue
			}
			if keyProblem(k, path, false) != "" {
				continue // no name: wrongTypes reports it
			}
			ft, ok := fields[k.Value]
			if !ok {
				w.out = append(w.out, fmt.Sprintf("line %d: %s is not a known setting (known here: %s)", k.Line, join(path, k.Value), strings.Join(names, ", ")))
				continue
			}
			w.walk(v, ft, join(path, k.Value))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isMerge(k) {
				w.merge(v, t, path)
				continue
			}
			if keyProblem(k, path, true) != "" {
				continue // no name: wrongTypes reports it, and drops the entry
			}
			w.walk(v, t.Elem(), join(path, k.Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, v := range n.Content {
			w.walk(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// merge checks the mapping(s) a merge key brings in against t. A value that is
// not a mapping or a sequence of mappings is left to the decoder, which
// refuses it.
func (w *fieldWalker) merge(v *yaml.Node, t reflect.Type, path string) {
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			w.walk(m, t, path)
		}
		return
	}
	w.walk(v, t, path)
}

// isMerge is yaml.v3's test for a merge key: a plain (not quoted) <<.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// structFields are t's YAML keys with their types, and the keys sorted.
func structFields(t reflect.Type) (map[string]reflect.Type, []string) {
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
	return fields, names
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
