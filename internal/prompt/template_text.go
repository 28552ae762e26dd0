package prompt

import (
	"strings"
	"text/template"
	"text/template/parse"
)

// templateText is what a message template can write as written in it, for
// load-time checks: the text between its actions and the string literals its
// actions use ({{ printf "Reply in JSON: %s" .x }}), in every branch and in
// every template it defines. Comments are not in it (the parser drops them),
// nor function and field names ({{ json .items }}), nor the conditions of if,
// with and range. hasAction reports an action that can print a value, whose
// output no load-time check can know.
func templateText(t *template.Template) (text string, hasAction bool) {
	var b strings.Builder
	inspectAll(t, func(n parse.Node, _ bool) bool {
		switch n := n.(type) {
		case *parse.TextNode:
			b.Write(n.Text)
			b.WriteByte(' ')
		case *parse.ActionNode:
			hasAction = true
			if n.Pipe == nil {
				return false
			}
			inspect(n.Pipe, true, func(n parse.Node, _ bool) bool {
				if s, ok := n.(*parse.StringNode); ok {
					b.WriteString(s.Text)
					b.WriteByte(' ')
				}
				return true
			})
			return false
		case *parse.TemplateNode:
			hasAction = true // the template it calls is walked as one of t's
		}
		return true
	})
	return b.String(), hasAction
}
