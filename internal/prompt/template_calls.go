package prompt

import (
	"fmt"
	"text/template"
	"text/template/parse"
)

// undefinedCalls returns a problem for each {{ template "name" }} of t (in
// any of the templates it defines, branches included) that names a template
// the message defines nowhere: every job that reaches it (all of them, or
// only those taking the branch it sits in) would fail to render, a fault of
// the prompt that render would blame on the caller; so it is refused at load
// even in a branch. src is t's text, for positions.
func undefinedCalls(t *template.Template, src string) []string {
	var out []string
	seen := map[string]bool{}
	inspectAll(t, func(n parse.Node, _ bool) bool {
		if n, ok := n.(*parse.TemplateNode); ok {
			if d := t.Lookup(n.Name); (d == nil || d.Tree == nil) && !seen[n.Name] {
				seen[n.Name] = true
				out = append(out, fmt.Sprintf("{{ template %q }}%s calls a template defined nowhere in this message: every job that reaches it would fail to render, through the prompt's fault, not the input's; define it in the same message with {{ define %q }}...{{ end }}, or correct the name", n.Name, nodeAt(src, n), n.Name))
			}
		}
		return true
	})
	return out
}
