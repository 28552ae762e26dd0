package providers

import "strings"

// streamOptionsRefused reports a refusal (m, lower-cased) that names
// stream_options as what it refuses. The adapter adds stream_options to
// every streamed call (include_usage) whatever the caller asked: a server
// that refuses the field refuses every streamed job, so the refusal is the
// target's configuration, not the caller's request. Fireworks in 2024:
// "Extra inputs are not permitted, field: 'stream_options'"; pydantic's loc
// ('body', 'stream_options'); Azure's "Unrecognized request argument
// supplied: stream_options"; LiteLLM's "does not support parameters:
// ['stream_options']"; Gemini's `Unknown name "stream_options": Cannot find
// field`.
//
// A refusal that only repeats the request does not name it: vLLM's
// validation errors echo the whole body in pydantic's 'input': {…}, which
// holds the stream_options the adapter sent, whatever the caller's mistake
// was. Such echoed values are left out (withoutEchoedInput), and a mention
// that is a key of an echoed object ('stream_options': {…}, quotedKey) is
// not one: otherwise one tenant's bad requests on streamed calls would fail
// over as the router's misconfiguration, and open the target's breaker for
// every tenant.
func streamOptionsRefused(m string) bool {
	const name = "stream_options"
	rest := withoutEchoedInput(m)
	for {
		i := strings.Index(rest, name)
		if i < 0 {
			return false
		}
		before, after := rest[:i], rest[i+len(name):]
		if !quotedKey(before, after) || strings.HasSuffix(before, `unknown name "`) || strings.HasSuffix(before, `unknown name \"`) {
			return true
		}
		rest = after
	}
}

// quotedKey reports whether a name, with the text before and after it, is
// a key of an object as Python's repr or JSON writes one: in quotes (perhaps
// escaped), then a colon. A name that a message merely puts in quotes
// ("field: 'stream_options'") or before a colon unquoted ("stream_options:
// extra inputs are not permitted") is not one.
func quotedKey(before, after string) bool {
	for _, q := range []string{`'`, `"`, `\"`} {
		if strings.HasSuffix(before, q) && strings.HasPrefix(after, q) {
			return strings.HasPrefix(strings.TrimLeft(after[len(q):], " \t\n"), ":")
		}
	}
	return false
}

// withoutEchoedInput is m without the values of its 'input' keys (pydantic's
// echo of what it refused, in Python's repr, in JSON or in its own text):
// each such value — an object, list, tuple, string or scalar — is cut out up
// to its end, or to the end of m when it is cut short.
func withoutEchoedInput(m string) string {
	var b strings.Builder
	for {
		i, n := echoedInputKey(m)
		if i < 0 {
			if b.Len() == 0 {
				return m
			}
			b.WriteString(m)
			return b.String()
		}
		b.WriteString(m[:i+n])
		m = m[i+n:]
		v := strings.TrimLeft(m, " \t\n")
		m = v[valueLen(v):]
	}
}

// echoedInputKeys are the forms of an 'input' key: Python's repr, JSON, JSON
// inside a JSON string, and the input_value= of pydantic's own text ("…
// [type=value_error, input_value={…}, input_type=dict]").
var echoedInputKeys = []string{`'input':`, `"input":`, `\"input\":`, `input_value=`}

// echoedInputKey is the index and length of the first 'input' key in m, or
// -1.
func echoedInputKey(m string) (int, int) {
	at, n := -1, 0
	for _, k := range echoedInputKeys {
		if i := strings.Index(m, k); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(k)
		}
	}
	return at, n
}

// valueLen is the length of the value v starts with: up to the bracket that
// closes an object, list or tuple (brackets within quotes do not count), up
// to the closing quote of a string, or up to the next ',', '}', ']' or ')'
// for a scalar; all of v when it is cut short.
func valueLen(v string) int {
	if v == "" {
		return 0
	}
	var quote byte
	depth := 0
	switch v[0] {
	case '{', '[', '(':
	case '\'', '"':
		quote = v[0]
		for i := 1; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case quote:
				return i + 1
			}
		}
		return len(v)
	default:
		if i := strings.IndexAny(v, ",}])"); i >= 0 {
			return i
		}
		return len(v)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(v)
}

// streamOptionsMessage gives a misconfigured error whose provider refused
// stream_options (streamOptionsRefused) a message that says what an operator
// can set, with the provider's own words.
func streamOptionsMessage(e *Error, msg string) {
	if e.Kind != KindMisconfigured || !streamOptionsRefused(strings.ToLower(msg)) {
		return
	}
	m := "the target refuses stream_options (include_usage), which the router sends with every streamed call to read the answer's usage: " +
		"an operator must set the provider's stream: false"
	if msg = strings.TrimSpace(msg); msg != "" {
		m += "; the provider said: " + msg
	}
	e.Message = truncate(m)
}
