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
// naming no argument): fmt's note would be refused at every render that
// reaches it (see fmtError; all of them, or only those taking the branch it
// sits in), and the prompt, not the input, is at fault, so it is refused at
// load even in a branch. Whether an argument
// fits its verb depends on the input and is checked when rendering.
func printfArity(t *template.Template, src string) []string {
	var out []string
	inspectAll(t, func(n parse.Node, _ bool) bool {
		if p, ok := n.(*parse.PipeNode); ok {
			for i, c := range p.Cmds {
				if what, fix := printfCommand(c, i > 0); what != "" {
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
