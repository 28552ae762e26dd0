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
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.TextNode:
			b.Write(n.Text)
			b.WriteByte(' ')
		case *parse.ActionNode:
			hasAction = true
			walkStrings(n.Pipe, &b)
		case *parse.IfNode:
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			hasAction = true // the template it calls is walked as one of t's
		}
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walk(tt.Tree.Root)
		}
	}
	return b.String(), hasAction
}

// walkStrings writes the string literals of a pipeline, nested pipelines
// included.
func walkStrings(p *parse.PipeNode, b *strings.Builder) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			switch a := a.(type) {
			case *parse.StringNode:
				b.WriteString(a.Text)
				b.WriteByte(' ')
			case *parse.PipeNode:
				walkStrings(a, b)
			}
		}
	}
}
