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
	if !errors.As(err, &exec) || !strings.Contains(err.Error(), "map has no entry for key ") {
		return nil
	}
	for _, f := range inputFields(t) {
		var idents []string
		prefix := "."
		switch n := f.node.(type) {
		case *parse.FieldNode:
			idents = n.Ident
		case *parse.VariableNode:
			idents, prefix = n.Ident[1:], "$."
		}
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
