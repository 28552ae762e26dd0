package chat

import (
	"strings"
	"unicode"

	"github.com/routerhq/router/internal/providers"
)

// validSchemaName reports whether name is what OpenAI accepts as a
// json_schema's name: 1 to 64 ASCII letters, digits, underscores or dashes
// (^[a-zA-Z0-9_-]{1,64}$). Another name is refused by OpenAI after the job
// is stored; the chat endpoint refuses it first.
func validSchemaName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		if !nameByte(name[i]) {
			return false
		}
	}
	return true
}

// validCallName reports whether name is what OpenAI accepts as the
// function.name of a call in the history: one or more ASCII letters, digits,
// underscores or dashes. OpenAI's 400 quotes the pattern ^[a-zA-Z0-9_-]+$
// ("'messages[9].tool_calls[0].function.name'"), with no length in it: the
// length is left to OpenAI, and only the characters are checked here.
func validCallName[T string | []byte](name T) bool {
	if len(name) == 0 {
		return false
	}
	for i := range len(name) {
		if !nameByte(name[i]) {
			return false
		}
	}
	return true
}

// validMessageName reports whether name, a message's name, is free of what
// OpenAI has refused in one under each pattern it has quoted: white space and
// < | \ / > (its earlier ^[a-zA-Z0-9_-]+$ refused more — "bot.v2", "Zoë" —
// and its later ^[^\s<|\\/>]+$ takes those; the Anthropic adapter sends no
// name). Only what every version refuses is refused here.
func validMessageName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, badNameRune)
}

func badNameRune(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`<|\/>`, r) }

// messageNameFrom suggests a name validMessageName accepts: each refused
// rune an underscore.
func messageNameFrom(name string) string {
	s := strings.Trim(strings.Map(func(r rune) rune {
		if badNameRune(r) {
			return '_'
		}
		return r
	}, name), "_")
	if s == "" {
		return "participant"
	}
	return s
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// schemaNameFrom suggests a valid name for an invalid one: its other bytes
// become underscores, at most 64 of them.
func schemaNameFrom(name string) string { return nameFrom(name, "response") }

// nameFrom is schemaNameFrom for any name: fallback when name has no letter,
// digit, underscore or dash to keep.
func nameFrom(name, fallback string) string {
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < 64; i++ {
		if nameByte(name[i]) {
			b.WriteByte(name[i])
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	if s := strings.Trim(b.String(), "_"); s != "" {
		return s
	}
	return fallback
}

// mentionsJSON reports whether any message's text mentions JSON, as
// OpenAI-compatible providers require of a json_object request.
func mentionsJSON(msgs []providers.Message) bool {
	for _, m := range msgs {
		if providers.MentionsJSON(m.Content) {
			return true
		}
	}
	return false
}
