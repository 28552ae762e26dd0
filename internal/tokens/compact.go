package tokens

import (
	"bytes"
	"encoding/json"
)

// compactJSON is raw as the adapters send it: its compact JSON text (both
// adapters re-encode the caller's tools and tool calls, which drops the
// whitespace between tokens). changed is false, and nothing is allocated,
// when raw has no whitespace outside its strings (nothing to compact) or is
// not valid JSON (counted as written).
func compactJSON(raw []byte) (out []byte, changed bool) {
	if !spaced(raw) {
		return raw, false
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if json.Compact(&b, raw) != nil {
		return raw, false
	}
	return b.Bytes(), true
}

// spaced reports whether raw, JSON text, has whitespace outside its strings:
// what json.Compact removes. Text without any whitespace byte (most tool
// calls, which clients copy from a compact answer) is rejected at once.
func spaced(raw []byte) bool {
	if bytes.IndexAny(raw, " \t\n\r") < 0 {
		return false
	}
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return true
		}
	}
	return false
}
