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
	prev := ' ' // before the first rune: nothing visible
	for i, r := range name {
		switch {
		case joiner(r) && visibleNeighbours(prev, name[i+len(string(r)):]):
			// Part of how the word is written (Persian, Indic conjuncts,
			// emoji sequences): allowed between two visible characters.
		case r == ',':
			return `cannot contain "," (the command line's lists of names, such as --provider, are comma-separated)`
		case unicode.IsSpace(r):
			return "cannot contain white space (it could not be told apart in logs, tables and command lines)"
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return "cannot contain a control character or invalid UTF-8"
		case invisibleFormat(r):
			return fmt.Sprintf("cannot contain an invisible format character (%U, often pasted with it from a web page; it shows as nothing, or reorders the text around it)", r)
		}
		prev = r
	}
	return ""
}

// joiner reports the zero-width non-joiner and joiner (U+200C, U+200D):
// format characters that some scripts need to be spelled right (Persian
// writes a non-joiner inside words, Indic scripts pick a conjunct's form with
// them, emoji sequences join with a joiner).
func joiner(r rune) bool { return r == '\u200c' || r == '\u200d' }

// visibleNeighbours reports whether prev, the rune before a joiner, and the
// first rune of rest, after it, are both visible: neither white space, a
// control character nor a format character (nor the end of the name).
func visibleNeighbours(prev rune, rest string) bool {
	visible := func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.IsControl(r) && !invisibleFormat(r) && r != unicode.ReplacementChar
	}
	for _, next := range rest {
		return visible(prev) && visible(next)
	}
	return false
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
