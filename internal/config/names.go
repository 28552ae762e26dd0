package config

import (
	"fmt"
	"strings"
	"unicode"
)

// nameProblem is why name cannot name a provider or a route, "" when it can:
// a "," would split it in the command line's comma-separated lists
// (--provider), and white space, a control character or an invisible format
// character makes a name that cannot be typed or read back from a log or a
// table.
func nameProblem(name string) string {
	for _, r := range name {
		switch {
		case r == ',':
			return `cannot contain "," (the command line's lists of names, such as --provider, are comma-separated)`
		case unicode.IsSpace(r):
			return "cannot contain white space (it could not be told apart in logs, tables and command lines)"
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return "cannot contain a control character or invalid UTF-8"
		case invisibleFormat(r):
			return fmt.Sprintf("cannot contain an invisible format character (%U, often pasted with it from a web page; it shows as nothing, or reorders the text around it)", r)
		}
	}
	return ""
}

// invisibleFormat reports a Unicode format character (Cf: a zero-width space
// U+200B, a byte-order mark U+FEFF, a right-to-left override U+202E): neither
// white space nor a control character, it shows as nothing or reorders the
// text around it. Names and owners refuse it.
func invisibleFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// modelNameProblem is why model cannot name a provider's or a target's model,
// "" when it can. The model is part of the target's id (provider/model), which
// --provider lists and metrics label, and is sent to the provider as written:
// a "," (two models written into one target) or a stray space makes a target
// that cannot be selected and whose every attempt asks for a model that does
// not exist. A "/" is allowed: model ids such as meta-llama/... hold one.
func modelNameProblem(model string) string {
	why := nameProblem(model)
	if why == "" {
		return ""
	}
	return "a model name " + why + ": write the provider's model id exactly, one per target (a route lists another model as a target of its own)"
}

// saneName is name with what nameProblem refuses replaced by "-" (an
// invisible format character dropped), to suggest.
func saneName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case invisibleFormat(r):
			return -1
		case r == ',' || r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar:
			return '-'
		}
		return r
	}, name)
}
