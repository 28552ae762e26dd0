package prompt

import (
	"text/template"
	"text/template/parse"
)

// inspect walks the template tree from n in the order it is written — a
// node, then its pipeline (commands, then their arguments), then its body,
// then its else branch — calling visit for each node; where visit returns
// false, n's children are skipped. top says whether dot is still the data the
// walk began with: false in the bodies of range and with (their pipelines and
// else branches keep it).
func inspect(n parse.Node, top bool, visit func(n parse.Node, top bool) bool) {
	if !visit(n, top) {
		return
	}
	list := func(l *parse.ListNode, top bool) {
		if l != nil {
			inspect(l, top, visit)
		}
	}
	pipe := func(p *parse.PipeNode) {
		if p != nil {
			inspect(p, top, visit)
		}
	}
	branch := func(b *parse.BranchNode, bodyTop bool) {
		pipe(b.Pipe)
		list(b.List, bodyTop)
		list(b.ElseList, top)
	}
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			inspect(c, top, visit)
		}
	case *parse.ActionNode:
		pipe(n.Pipe)
	case *parse.IfNode:
		branch(&n.BranchNode, top)
	case *parse.RangeNode: // dot is an element in the body
		branch(&n.BranchNode, false)
	case *parse.WithNode: // dot is the value in the body
		branch(&n.BranchNode, false)
	case *parse.TemplateNode:
		pipe(n.Pipe)
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			inspect(c, top, visit)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			inspect(a, top, visit)
		}
	case *parse.ChainNode:
		inspect(n.Node, top, visit)
	}
}

// inspectAll walks every template t defines (t itself included) with
// inspect, each from its root.
func inspectAll(t *template.Template, visit func(n parse.Node, top bool) bool) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			inspect(tt.Tree.Root, true, visit)
		}
	}
}
