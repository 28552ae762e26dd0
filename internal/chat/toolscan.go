package chat

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/routerhq/router/internal/jsontext"
)

// scanToolCalls reads raw, the tool_calls of a message, in one pass without
// decoding it, and appends the calls' ids to ids. It reports ok only when
// every call passes slowToolCalls's checks: an object with a string id (not
// empty), type "function", a function object with a string name of letters,
// digits, underscores or dashes, arguments (when given) a string that is blank
// or holds JSON, and an index (when given) null or an integer. Whatever else
// it meets — escapes in a key, an id or a name, a key only case-folded to a
// member's, a member twice, a value of another kind — it leaves to
// slowToolCalls, which decodes and decides.
func scanToolCalls(raw []byte, ids []string) ([]string, bool) {
	n := len(ids)
	p := skipSpace(raw, 0)
	if p >= len(raw) || raw[p] != '[' {
		return ids[:n], false
	}
	p = skipSpace(raw, p+1)
	if p < len(raw) && raw[p] == ']' {
		return ids, skipSpace(raw, p+1) == len(raw)
	}
	for {
		id, end, ok := scanToolCall(raw, p)
		if !ok {
			return ids[:n], false
		}
		ids = append(ids, id)
		p = skipSpace(raw, end)
		if p >= len(raw) {
			return ids[:n], false
		}
		switch raw[p] {
		case ',':
			p = skipSpace(raw, p+1)
		case ']':
			if skipSpace(raw, p+1) != len(raw) {
				return ids[:n], false
			}
			return ids, true
		default:
			return ids[:n], false
		}
	}
}

// The members of a call scanToolCall checks, as bits of what it has seen.
const (
	seenID = 1 << iota
	seenType
	seenFunction
	seenIndex
	seenName
	seenArguments
)

// scanToolCall reads the call at raw[p:], and returns its id and where it
// ends, or ok false.
func scanToolCall(raw []byte, p int) (id string, end int, ok bool) {
	var seen int
	named := false
	end, ok = scanObject(raw, p, func(key, value []byte) bool {
		var bit int
		switch string(key) {
		case "id":
			bit = seenID
			text, plain := plainString(value)
			if !plain || len(text) == 0 || !utf8.Valid(text) {
				return false
			}
			id = string(text)
		case "type":
			bit = seenType
			if string(value) != `"function"` {
				return false
			}
		case "index":
			bit = seenIndex
			if !integerOrNull(value) {
				return false
			}
		case "function":
			bit = seenFunction
			var fseen int
			if _, ok := scanObject(value, 0, func(key, value []byte) bool {
				var bit int
				switch string(key) {
				case "name":
					bit = seenName
					text, plain := plainString(value)
					if !plain || !validCallName(text) {
						return false
					}
					named = true
				case "arguments":
					bit = seenArguments
					if value[0] != '"' {
						return false
					}
					var buf [512]byte
					if !validArguments(appendUnquoted(buf[:0], value)) {
						return false
					}
				default:
					return !foldsTo(key, "name", "arguments")
				}
				if fseen&bit != 0 {
					return false
				}
				fseen |= bit
				return true
			}); !ok {
				return false
			}
		default:
			return !foldsTo(key, "id", "type", "index", "function")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	return id, end, ok && seen&(seenID|seenType|seenFunction) == seenID|seenType|seenFunction && named
}

// scanObject reads the object at raw[p:], calling member for each of its
// members (key without quotes or escapes, value as written) until it returns
// false; it returns where the object ends, and whether all went well.
func scanObject(raw []byte, p int, member func(key, value []byte) bool) (int, bool) {
	p = skipSpace(raw, p)
	if p >= len(raw) || raw[p] != '{' {
		return p, false
	}
	p = skipSpace(raw, p+1)
	if p < len(raw) && raw[p] == '}' {
		return p + 1, true
	}
	for {
		kend := skipValue(raw, p)
		if kend < 0 || raw[p] != '"' {
			return p, false
		}
		key, plain := plainString(raw[p:kend])
		if !plain {
			return p, false
		}
		p = skipSpace(raw, kend)
		if p >= len(raw) || raw[p] != ':' {
			return p, false
		}
		p = skipSpace(raw, p+1)
		vend := skipValue(raw, p)
		if vend < 0 || !member(key, raw[p:vend]) {
			return p, false
		}
		p = skipSpace(raw, vend)
		if p >= len(raw) {
			return p, false
		}
		switch raw[p] {
		case ',':
			p = skipSpace(raw, p+1)
		case '}':
			return p + 1, true
		default:
			return p, false
		}
	}
}

// skipValue returns where the JSON value at raw[p:] ends, or -1.
func skipValue(raw []byte, p int) int {
	if p >= len(raw) {
		return -1
	}
	switch raw[p] {
	case '"':
		for i := p + 1; i < len(raw); i++ {
			switch raw[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for i := p; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				e := skipValue(raw, i)
				if e < 0 {
					return -1
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	i := p // a number, true, false or null
	for i < len(raw) && raw[i] != ',' && raw[i] != ']' && raw[i] != '}' && skipSpace(raw, i) == i {
		i++
	}
	if i == p {
		return -1
	}
	return i
}

func skipSpace(raw []byte, p int) int {
	for p < len(raw) && (raw[p] == ' ' || raw[p] == '\t' || raw[p] == '\r' || raw[p] == '\n') {
		p++
	}
	return p
}

// plainString returns the text of the JSON string quoted when it has no
// escapes.
func plainString(quoted []byte) ([]byte, bool) {
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return nil, false
	}
	text := quoted[1 : len(quoted)-1]
	return text, bytes.IndexByte(text, '\\') < 0
}

// foldsTo reports whether key matches one of names only as encoding/json
// matches keys, case-folded.
func foldsTo(key []byte, names ...string) bool {
	for _, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return true
		}
	}
	return false
}

// integerOrNull reports whether value is null or an integer go-openai's *int
// index takes.
func integerOrNull(value []byte) bool {
	if string(value) == "null" {
		return true
	}
	digits := value
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validArguments reports whether args, a call's arguments, can be sent: blank
// (no arguments, sent as {}) or JSON, as the Anthropic adapter requires.
func validArguments(args []byte) bool {
	args = bytes.TrimSpace(args)
	return len(args) == 0 || json.Valid(args)
}

// appendUnquoted appends the text of the JSON string quoted (valid JSON) to
// dst, as encoding/json decodes it; it returns the text itself when it has no
// escapes.
func appendUnquoted(dst, quoted []byte) []byte {
	s := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	return jsontext.AppendUnescaped(dst, s)
}
