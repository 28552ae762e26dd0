package prompt

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// absentFieldRead explains err, t's render error over data, when it is a read
// of a field of an absent optional key ({{ if .tier.name }} with tier
// declared but not sent): an absent key is an empty map, so text/template
// said `map has no entry for key "name"`, which reads as if the caller had
// sent tier without name. It returns nil for any other error. src is t's
// text, for positions. Only .key.field and $.key.field where dot is the input
// are recognised (inputFields); other reads keep text/template's error.
func absentFieldRead(t *template.Template, src string, err error, data map[string]any) error {
	var exec template.ExecError
	if !errors.As(err, &exec) {
		return nil
	}
	if !strings.Contains(err.Error(), "map has no entry for key ") {
		return nullFieldRead(t, src, err, data)
	}
	for _, f := range inputFields(t) {
		idents, prefix := f.path()
		if len(idents) < 2 {
			continue
		}
		if _, ok := data[idents[0]].(absent); !ok {
			continue
		}
		loc, _ := t.ErrorContext(f.node)
		if !strings.Contains(err.Error(), "template: "+loc+": ") || !strings.HasSuffix(err.Error(), fmt.Sprintf("map has no entry for key %q", idents[1])) {
			continue
		}
		key := prefix + idents[0]
		return fmt.Errorf("{{ %s }}%s reads %q of %s, but %s is absent in the input (optional: the input schema does not require it and the caller did not send it): the prompt is at fault; guard it with {{ with %s }}...{{ .%s }}...{{ end }}, or {{ if %s }}",
			f.node, nodeAt(src, f.node), idents[1], key, key, key, idents[1], key)
	}
	return nil
}

// nullFieldRead explains err, t's render error over data, when it is a read
// of a field of a value the caller sent as null ({{ .tier.name }} over
// {"tier": null}, or {{ .a.b.c }} over {"a": {"b": null}}): text/template said
// "nil pointer evaluating interface {}.name", which names neither the key nor
// the fix. It returns nil for any other error. The reads recognised are
// inputFields'.
func nullFieldRead(t *template.Template, src string, err error, data map[string]any) error {
	const nilRead = "nil pointer evaluating interface {}."
	msg := err.Error()
	if !strings.Contains(msg, nilRead) {
		return nil
	}
	for _, f := range inputFields(t) {
		idents, prefix := f.path()
		loc, _ := t.ErrorContext(f.node)
		if !strings.Contains(msg, "template: "+loc+": ") {
			continue
		}
		var v any = data
		for i := 0; i < len(idents)-1; i++ {
			m, ok := v.(map[string]any)
			if !ok {
				break
			}
			x, present := m[idents[i]]
			if !present {
				break
			}
			if x != nil {
				v = x
				continue
			}
			if !strings.HasSuffix(msg, nilRead+idents[i+1]) {
				break
			}
			key := prefix + strings.Join(idents[:i+1], ".")
			return fmt.Errorf("{{ %s }}%s reads %q of %s, but %s is null in the input: send %s as an object, or guard the read in the prompt with {{ with %s }}...{{ .%s }}...{{ end }}, or {{ if %s }}",
				f.node, nodeAt(src, f.node), idents[i+1], key, key, key, key, idents[i+1], key)
		}
	}
	return nil
}

// path returns the keys f reads, from the input down ([tier name] for
// .tier.name and $.tier.name), and how its text starts ("." or "$.").
func (f inputField) path() (idents []string, prefix string) {
	switch n := f.node.(type) {
	case *parse.FieldNode:
		return n.Ident, "."
	case *parse.VariableNode:
		return n.Ident[1:], "$."
	}
	return nil, "."
}
