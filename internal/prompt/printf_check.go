package prompt

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// fmtError returns an error when s, what fmt.Sprintf wrote for format and
// wrapped (printf's arguments as it passed them), holds one of fmt's error
// notes ("%!d(string=12)", "%!d(MISSING)", "%!(EXTRA string=12)"): they
// would reach the model as text. The text of s cannot tell a note from a
// "%!" the caller or the prompt wrote: an argument's "50%" before the
// format's "!" ("Save %s!"), or the format's own "%%!". So the format is run
// again over blanks that print nothing in place of the input's text (its
// strings, arrays and objects): a string's blank checks its verb itself
// (printfText), an array or object checked its own in the first run
// (printfContainer), and what fmt writes then comes from the format and
// fmt alone (isFmtNote). One more Sprintf, only when s holds "%!".
func fmtError(format string, wrapped []any, s string) error {
	if !strings.Contains(s, "%!") {
		return nil
	}
	var err error
	blanks := make([]any, len(wrapped))
	for i, a := range wrapped {
		switch x := a.(type) {
		case string:
			blanks[i] = printfText{s: x, err: &err}
		case printfContainer:
			blanks[i] = printfText{container: true, err: &err}
		default: // numbers, booleans, a template's literals: no text of the input's
			blanks[i] = a
		}
	}
	b := fmt.Sprintf(format, blanks...)
	if err != nil {
		return fmt.Errorf("printf %q: %w", format, err)
	}
	for i := 0; ; i += 2 {
		j := strings.Index(b[i:], "%!")
		if j < 0 {
			return nil
		}
		i += j
		if !isFmtNote(b[i:]) {
			continue // the format's own text ("%%!")
		}
		note := b[i:]
		if strings.HasPrefix(note, "%!(EXTRA ") {
			// It names the extra arguments with their values: the first
			// run's, at its end, has them as the input holds them.
			note = s[strings.LastIndex(s, "%!(EXTRA "):]
		}
		return fmt.Errorf("printf %q: %s", format, fmtNote(note))
	}
}

// isFmtNote reports whether s, which starts with "%!", starts with one of
// the notes fmt writes: "%!(EXTRA ...)", "%!(NOVERB)", "%!(BADWIDTH)",
// "%!(BADPREC)", or a verb then "(MISSING)", "(BADINDEX)", "(PANIC=",
// "(<nil>)" or "(type=value)". A format whose own text looks like one
// ("100%%!d(int=5)") is taken for one.
func isFmtNote(s string) bool {
	rest := s[2:]
	if strings.HasPrefix(rest, "(") {
		for _, p := range []string{"(EXTRA ", "(NOVERB)", "(BADWIDTH)", "(BADPREC)"} {
			if strings.HasPrefix(rest, p) {
				return true
			}
		}
		return false
	}
	_, size := utf8.DecodeRuneInString(rest)
	rest, ok := strings.CutPrefix(rest[size:], "(")
	if size == 0 || !ok {
		return false
	}
	for _, p := range []string{"MISSING)", "BADINDEX)", "PANIC=", "<nil>)"} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	typ, _, ok := strings.Cut(rest, "=")
	return ok && typ != "" && !strings.ContainsAny(typ, "()%!\n")
}

// printfText stands for a string, array or object argument in fmtError's
// second run: it prints nothing. A string's verb is checked as fmt checks
// it, the first one that does not fit setting *err; an array's or object's
// was checked in the first run.
type printfText struct {
	s         string
	container bool
	err       *error
}

// Format implements fmt.Formatter.
func (p printfText) Format(_ fmt.State, verb rune) {
	switch verb {
	case 'v', 's', 'q', 'x', 'X': // what fmt formats a string with
		return
	}
	if !p.container && *p.err == nil {
		*p.err = errors.New(fmtNote(fmt.Sprintf("%%!%c(string=%s)", verb, p.s)))
	}
}

// fmtNote explains fmt's error note at the start of s, and says how to fix it.
func fmtNote(s string) string {
	note := s
	if end := strings.IndexByte(s, ')'); end > 0 {
		note = s[:end+1]
	}
	rest := s[2:] // after "%!"
	if strings.HasPrefix(rest, "(") {
		switch {
		case strings.HasPrefix(rest, "(EXTRA "):
			return fmt.Sprintf("more arguments than the format has verbs (fmt wrote %q); remove the extra argument or add a verb for it", note)
		case strings.HasPrefix(rest, "(NOVERB)"):
			return `the format ends with a lone "%"; write "%%" for a percent sign`
		case strings.HasPrefix(rest, "(BADWIDTH)"), strings.HasPrefix(rest, "(BADPREC)"):
			// fmt takes a "*" only from a Go int within 1e6: never from the
			// input, whose numbers are JSON numbers.
			return fmt.Sprintf(`a "*" width or precision takes a whole number from the template, such as a literal 5 or (len .x), at most 1000000; a value of the input is never one (fmt wrote %q); write the width or precision in the format, like "%%5d" or "%%.2f"`, note)
		}
		return fmt.Sprintf("fmt could not apply the format (it wrote %q); check the format's widths, precisions and argument indexes", note)
	}
	verb, size := firstRune(rest)
	inner := strings.TrimSuffix(strings.TrimPrefix(note[2+size:], "("), ")")
	switch {
	case inner == "MISSING":
		return fmt.Sprintf("%%%c has no argument (fmt wrote %q); give printf one argument for each verb, or write \"%%%%\" for a percent sign", verb, note)
	case strings.HasPrefix(inner, "PANIC="):
		return fmt.Sprintf("%%%c failed (fmt wrote %q)", verb, note)
	}
	typ, value, _ := strings.Cut(inner, "=")
	return fmt.Sprintf("%%%c cannot format %s %s (fmt wrote %q); use %%v to print any value as it is, or a verb for its type (%%s for text, %%t for a boolean; a number sent as a string is text: make it a number in the input schema)",
		verb, typeName(typ), value, note)
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return '?', 0
}

// typeName names a Go type fmt printed for an input value in the words of
// JSON.
func typeName(t string) string {
	switch t {
	case "string", "prompt.printfText": // printfText: %p of a string
		return "the string"
	case "bool":
		return "the boolean"
	case "[]interface {}":
		return "the array"
	case "map[string]interface {}":
		return "the object"
	case "json.Number", "int", "int64", "float64":
		return "the number"
	}
	return "the value (" + t + ")"
}
