package prompt

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// errNullOrdered is lt, le, gt or ge given a null or an absent optional key:
// text/template's own said only "invalid type for comparison", naming
// neither the key nor the fix. render explains it (nullOrdered).
var errNullOrdered = errors.New("cannot order a value that is null or absent in the input")

// nullOrderedError is errNullOrdered for argument arg (1 or 2) of fn.
type nullOrderedError struct {
	fn  string
	arg int
}

func (e *nullOrderedError) Error() string {
	return fmt.Sprintf("%s: argument %d: %v", e.fn, e.arg, errNullOrdered)
}

func (e *nullOrderedError) Unwrap() error { return errNullOrdered }

// nullOrdered explains err, t's render error over data, when an ordering
// was given a null (errNullOrdered): which call, which of its arguments,
// whether the key is absent (optional, not sent) or was sent as null, that
// the prompt is at fault, and the guards to write. src is t's text, for
// positions. A call it cannot find keeps err, with the keys that are null
// or absent and the guards.
func nullOrdered(t *template.Template, src string, err error, data map[string]any) error {
	var noe *nullOrderedError
	if !errors.As(err, &noe) {
		return err
	}
	msg := err.Error()
	var found error
	inspectAll(t, func(n parse.Node, top bool) bool {
		cmd, ok := n.(*parse.CommandNode)
		if !ok || found != nil || len(cmd.Args) == 0 {
			return found == nil
		}
		if id, ok := cmd.Args[0].(*parse.IdentifierNode); !ok || id.Ident != noe.fn {
			return true
		}
		if loc, _ := t.ErrorContext(cmd); !strings.Contains(msg, "template: "+loc+": ") {
			return true
		}
		arg := "the value piped into it"
		what := "is null or absent in the input"
		guard := ".key"
		if noe.arg < len(cmd.Args) {
			a := cmd.Args[noe.arg]
			arg, guard = a.String(), a.String()
			what = nullOrAbsent(a, top, data)
		}
		found = fmt.Errorf("{{ %s }}%s orders %s, but %s %s: the prompt is at fault (%s takes numbers, strings or booleans); "+
			"guard it with {{ if and %s (%s) }}, {{ with %s }}...{{ end }} or {{ if %s }}, or give it a default: (default 0 %s)",
			cmd, nodeAt(src, cmd), arg, arg, what, noe.fn, guard, cmd, guard, guard, guard)
		return false
	})
	if found != nil {
		return found
	}
	return fmt.Errorf(`%w (null or absent here: %s); guard it with {{ if and .key (gt .key 0) }} or {{ with .key }}, or give it a default: (default 0 .key)`, err, nullPaths(data))
}

// nullOrAbsent says whether the input read a (.key, $.key, .key.sub where
// dot is the input) is absent or was sent as null.
func nullOrAbsent(a parse.Node, top bool, data map[string]any) string {
	var idents []string
	switch n := a.(type) {
	case *parse.FieldNode:
		if top {
			idents = n.Ident
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			idents = n.Ident[1:]
		}
	}
	var v any = data
	for _, k := range idents {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		x, present := m[k]
		switch {
		case !present:
			return "is absent in the input"
		case x == nil:
			return "is null in the input (the caller sent null)"
		}
		if _, ok := x.(absent); ok {
			return "is absent in the input (optional: the input schema does not require it and the caller did not send it)"
		}
		v = x
	}
	return "is null or absent in the input"
}
