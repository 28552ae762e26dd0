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
	// In a {{ define }} or {{ block }} (a template other than t), dot and $
	// are what its {{ template }} call passed, not the input: defined names
	// the template then, and the key is not looked up in the input.
	defined := ""
	visit := func(n parse.Node, top bool) bool {
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
			if defined == "" {
				what = nullOrAbsent(inputPath(a, top), data)
			} else {
				what = nullOrAbsentDefined(t, defined, a, top, data)
			}
		}
		found = fmt.Errorf("{{ %s }}%s orders %s, but %s %s: the prompt is at fault (%s takes numbers, strings or booleans); "+
			"guard it with {{ if and %s (%s) }}, {{ with %s }}...{{ end }} or {{ if %s }}, or give it a default: (default 0 %s)",
			cmd, nodeAt(src, cmd), arg, arg, what, noe.fn, guard, cmd, guard, guard, guard)
		return false
	}
	for _, tt := range t.Templates() {
		if found == nil && tt.Tree != nil && tt.Tree.Root != nil {
			defined = ""
			if tt.Name() != t.Name() {
				defined = tt.Name()
			}
			inspect(tt.Tree.Root, true, visit)
		}
	}
	if found != nil {
		return found
	}
	return fmt.Errorf(`%w (null or absent here: %s); guard it with {{ if and .key (gt .key 0) }} or {{ with .key }}, or give it a default: (default 0 .key)`, err, nullPaths(data))
}

// inputPath is the path in the input that a reads when dot is the data the
// template was executed with (top) or anywhere for $: .key, $.key, .key.sub;
// nil for any other argument.
func inputPath(a parse.Node, top bool) []string {
	switch n := a.(type) {
	case *parse.FieldNode:
		if top {
			return n.Ident
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			return n.Ident[1:]
		}
	}
	return nil
}

// nullOrAbsentDefined is nullOrAbsent for a read a in the template defined
// ({{ define }} or {{ block }}), whose dot and $ are what its {{ template }}
// call passes, not the input. When it is called once, from t where dot is the input,
// with an input path (.customer), the read is followed from there
// (.customer.discount); otherwise it says the key is null or absent in the
// value the call passes.
func nullOrAbsentDefined(t *template.Template, defined string, a parse.Node, top bool, data map[string]any) string {
	var calls []*parse.TemplateNode
	var base []string
	inspect(t.Tree.Root, true, func(n parse.Node, callTop bool) bool {
		if c, ok := n.(*parse.TemplateNode); ok && c.Name == defined {
			calls = append(calls, c)
			base = nil
			if c.Pipe != nil && len(c.Pipe.Decl) == 0 && len(c.Pipe.Cmds) == 1 && len(c.Pipe.Cmds[0].Args) == 1 {
				switch arg := c.Pipe.Cmds[0].Args[0].(type) {
				case *parse.DotNode:
					if callTop {
						base = []string{}
					}
				default:
					base = inputPath(arg, callTop)
				}
			}
		}
		return true
	})
	for _, tt := range t.Templates() { // a call from another define passes a value of its own
		if tt.Name() != t.Name() && tt.Tree != nil && tt.Tree.Root != nil {
			inspect(tt.Tree.Root, true, func(n parse.Node, _ bool) bool {
				if c, ok := n.(*parse.TemplateNode); ok && c.Name == defined {
					calls = append(calls, c)
				}
				return true
			})
		}
	}
	rel := inputPath(a, top)
	if len(calls) == 1 && base != nil && rel != nil {
		path := append(append([]string(nil), base...), rel...)
		return fmt.Sprintf("(.%s in the input, as %s passes %s to {{ define %q }}) %s",
			strings.Join(path, "."), calls[0], callArg(calls[0]), defined, nullOrAbsent(path, data))
	}
	return fmt.Sprintf("is null or absent in the value {{ template %q }} was called with (in {{ define %q }}, dot and $ are that value, not the input)", defined, defined)
}

// callArg is the pipeline a {{ template }} call passes, as written.
func callArg(c *parse.TemplateNode) string {
	if c.Pipe == nil {
		return "nothing"
	}
	return c.Pipe.String()
}

// nullOrAbsent says whether the input path idents (nil: not known) is absent
// or was sent as null.
func nullOrAbsent(idents []string, data map[string]any) string {
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
