package prompt

import (
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// printfArity returns a problem for each printf of t (parsed from src) whose
// format is a string literal that does not fit the number of its arguments
// (a verb with no argument, an argument with no verb, a lone "%", an index
// naming no argument), or whose "*" width or precision comes from an
// argument that is never a Go int (printfStar): fmt's note would be refused
// at every render that reaches it (see fmtError; all of them, or only those
// taking the branch it sits in), and the prompt, not the input, is at fault,
// so it is refused at load even in a branch. Whether an argument fits its
// verb depends on the input and is checked when rendering.
func printfArity(t *template.Template, src string) []string {
	var out []string
	inspectAll(t, func(n parse.Node, _ bool) bool {
		if p, ok := n.(*parse.PipeNode); ok {
			for i, c := range p.Cmds {
				what, fix := printfCommand(c, i > 0)
				if what == "" {
					var prev *parse.CommandNode
					if i > 0 {
						prev = p.Cmds[i-1]
					}
					what, fix = printfStar(c, prev)
				}
				if what != "" {
					out = append(out, fmt.Sprintf("{{ %s }}%s %s: every job that reaches it would fail to render, through the prompt's fault, not the input's; %s", c, nodeAt(src, c), what, fix))
				}
			}
		}
		return true
	})
	return out
}

// anyOperand stands for one printf argument, of a type unknown at load: it
// takes every verb and prints nothing.
type anyOperand struct{}

// Format implements fmt.Formatter.
func (anyOperand) Format(fmt.State, rune) {}

// printfCommand checks one command when it is printf with a literal format;
// piped says it also receives the previous command's value as its last
// argument. It returns what is wrong and how to fix it, or "".
func printfCommand(c *parse.CommandNode, piped bool) (what, fix string) {
	if len(c.Args) < 2 {
		return "", ""
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || id.Ident != "printf" {
		return "", ""
	}
	f, ok := c.Args[1].(*parse.StringNode)
	if !ok || strings.Contains(f.Text, "%!") {
		return "", ""
	}
	n := len(c.Args) - 2
	if piped {
		n++
	}
	args := make([]any, n)
	for i := range args {
		args[i] = anyOperand{}
	}
	s := fmt.Sprintf(f.Text, args...)
	switch {
	case strings.Contains(s, "(BADINDEX)"):
		return fmt.Sprintf("has an argument index ([n]) that names none of its %d arguments", n), "number them from [1]"
	case strings.Contains(s, "(MISSING)"):
		return fmt.Sprintf("has more verbs than its %d arguments, so fmt would print %%!verb(MISSING)", n), `give printf one argument for each verb, or write "%%" for a percent sign`
	case strings.Contains(s, "%!(EXTRA "):
		return fmt.Sprintf("has fewer verbs than its %d arguments, so fmt would print %%!(EXTRA ...)", n), "remove the extra arguments or add a verb for each"
	case strings.Contains(s, "%!(NOVERB)"):
		return `ends its format with a lone "%"`, `write "%%" for a percent sign`
	}
	return "", ""
}

// intOperand stands for one printf argument that is a Go int (a literal 5,
// len's result): a "*" takes it as a width or precision of 0; a verb prints
// nothing.
type intOperand int

// Format implements fmt.Formatter.
func (intOperand) Format(fmt.State, rune) {}

// printfStar checks one printf command with a literal format (whose arity
// printfCommand found right) for a "*" width or precision taken from an
// argument that is never a Go int: a read of the input (.w, $.w, $x.w; an
// input number is a JSON number) or a string, boolean or nil literal. fmt
// prints %!(BADWIDTH) or %!(BADPREC) for it at every render that reaches it.
// prev is the command piped into c, or nil. It returns what is wrong and how
// to fix it, or "".
func printfStar(c *parse.CommandNode, prev *parse.CommandNode) (what, fix string) {
	if len(c.Args) < 2 {
		return "", ""
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || id.Ident != "printf" {
		return "", ""
	}
	f, ok := c.Args[1].(*parse.StringNode)
	if !ok || !strings.Contains(f.Text, "*") || strings.Contains(f.Text, "%!") {
		return "", ""
	}
	args := append([]parse.Node(nil), c.Args[2:]...)
	if prev != nil {
		var n parse.Node
		if len(prev.Args) == 1 {
			n = prev.Args[0]
		}
		args = append(args, n) // the piped value, last
	}
	probe := make([]any, len(args))
	for j := range probe {
		probe[j] = intOperand(0)
	}
	for j, n := range args {
		input, never := neverInt(n)
		if !never {
			continue
		}
		// Only argument j fails to be an int: fmt's note says whether a
		// "*" took it, as a width or as a precision.
		probe[j] = anyOperand{}
		s := fmt.Sprintf(f.Text, probe...)
		probe[j] = intOperand(0)
		kind, note := "width", "%!(BADWIDTH)"
		switch {
		case strings.Contains(s, note):
		case strings.Contains(s, "%!(BADPREC)"):
			kind, note = "precision", "%!(BADPREC)"
		default:
			continue
		}
		from := n.String() + ","
		if input {
			from += " a value of the input,"
		}
		example := `"%5d"`
		if kind == "precision" {
			example = `"%.2f"`
		}
		return fmt.Sprintf(`takes a "*" %s from %s which is never the Go int fmt needs there (it would print %s)`, kind, from, note),
			fmt.Sprintf("write the %s in the format, like %s", kind, example)
	}
	return "", ""
}

// neverInt reports whether printf argument n can never be a Go int, and
// whether it is a read of the input. Other arguments (a number literal, a
// variable, dot, a pipeline such as len or index) may be one.
func neverInt(n parse.Node) (input, never bool) {
	switch n := n.(type) {
	case *parse.FieldNode:
		return true, true
	case *parse.ChainNode:
		return true, len(n.Field) > 0
	case *parse.VariableNode:
		return true, len(n.Ident) > 1 // $.w, $x.w: a field of a value
	case *parse.StringNode, *parse.BoolNode, *parse.NilNode:
		return false, true
	}
	return false, false
}
