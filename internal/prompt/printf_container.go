package prompt

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// printfContainer is an array or object argument of printf: fmt formats it
// element by element with the verb (an object's keys too), so its input
// numbers are formatted as printfNumber formats a top-level one ({{ printf
// "%d" .ids }} over [1,2] prints "[1 2]", as fmt prints a slice of ints;
// over [1.5] it is printfNumber's error), and a note fmt writes inside it
// (%d of a string element or of an object's key) sets *err with advice for
// an array or object (the first error wins).
type printfContainer struct {
	v    any // the argument, its numbers wrapped in printfNumber
	orig any // the argument as the input holds it
	arg  int // its position in printf's arguments, from 1
	err  *error
}

// newPrintfContainer wraps a, when it is an array or object; ok is false
// for any other value.
func newPrintfContainer(a any, arg int, err *error) (printfContainer, bool) {
	switch a.(type) {
	case []any, map[string]any:
		return printfContainer{v: wrapNumbers(a, err), orig: a, arg: arg, err: err}, true
	}
	return printfContainer{}, false
}

// wrapNumbers returns a copy of v with every json.Number in it, at any
// depth, a printfNumber; the input's value stays as it was.
func wrapNumbers(v any, err *error) any {
	switch x := v.(type) {
	case json.Number:
		return printfNumber{n: x, err: err}
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = wrapNumbers(e, err)
		}
		return c
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = wrapNumbers(e, err)
		}
		return c
	}
	return v
}

// Format implements fmt.Formatter: what fmt would write for the wrapped
// value with the same verb, flags, width and precision.
func (p printfContainer) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), p.v)
	if i := strings.Index(s, "%!"); i >= 0 && *p.err == nil && !saysText(p.orig, "%!") {
		*p.err = p.note(s[i:], verb)
	}
	_, _ = io.WriteString(f, s)
}

// note explains fmt's note at the start of s, written inside the array or
// object for verb.
func (p printfContainer) note(s string, verb rune) error {
	if end := strings.IndexByte(s, ')'); end > 0 {
		s = s[:end+1]
	}
	kind, what := "an array", "its element"
	if _, ok := p.orig.(map[string]any); ok {
		kind, what = "an object", "its key or value" // an object's keys are text
	}
	var detail string
	if _, rest, ok := strings.Cut(s, "("); ok {
		if typ, value, ok := strings.Cut(strings.TrimSuffix(rest, ")"), "="); ok {
			detail = fmt.Sprintf(" %s %s", typeName(typ), value)
		}
	}
	return fmt.Errorf("argument %d is %s, which fmt formats element by element (an object's keys too), and %%%c cannot format %s%s (fmt wrote %q); print it with %%v as it is or {{ json .x }}, or range over it and format each element",
		p.arg, kind, verb, what, detail, s)
}
