package prompt

import (
	"fmt"
	"strings"
)

// fmtError returns an error when s, what fmt.Sprintf wrote for format and
// args, holds one of fmt's error notes ("%!d(string=12)", "%!d(MISSING)",
// "%!(EXTRA string=12)"): they would reach the model as text. Text that
// says "%!" in the format itself or in an argument is the prompt's or the
// caller's own, and is left alone (such a note is then not detected).
func fmtError(format string, args []any, s string) error {
	i := strings.Index(s, "%!")
	if i < 0 || strings.Contains(format, "%!") {
		return nil
	}
	for _, a := range args {
		if saysText(a, "%!") {
			return nil
		}
	}
	return fmt.Errorf("printf %q: %s", format, fmtNote(s[i:]))
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
	case "string":
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
