package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/routerhq/router/internal/contract"
)

// splitPointer parses an RFC 6901 JSON pointer ("/a/0/b", "~1" for "/", "~0"
// for "~").
func splitPointer(p string) ([]string, error) {
	if p == "" || p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer: start it with /, like /category or /line_items/0/amount", p)
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(s, "~0", ""), "~1", ""), "~") {
			return nil, fmt.Errorf("%q: \"~\" must be written ~0 (and \"/\" inside a key ~1)", p)
		}
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs, nil
}

// lookup returns the value at pointer p in doc.
func lookup(doc any, p string) (any, bool) {
	segs, err := splitPointer(p)
	if err != nil {
		return nil, false
	}
	cur := doc
	for _, s := range segs {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[s]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := contract.ArrayIndex(s) // RFC 6901: "01" or "+1" names no element
			if !ok || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// isNumber reports whether v is a number: a json.Number (as replies and
// suites decode them) or a Go integer or float (an Expect built in code).
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

// equal compares two values: numbers by their exact decimal value
// (contract.CompareNumbers: 1, 1.0 and 1e0 are equal, 12345678901 and
// 12345678902 are not, nor 9007199254740993 and 9007199254740992), strings,
// booleans and null exactly, lists item by item and objects key by key.
func equal(a, b any) bool {
	if isNumber(a) || isNumber(b) {
		if c, ok := contract.CompareNumbers(a, b); ok {
			return c == 0
		}
		// Not both numbers, or one CompareNumbers cannot read (an exponent
		// beyond its range): equal only when written alike.
		x, okX := a.(json.Number)
		y, okY := b.(json.Number)
		return okX && okY && x == y
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case string, bool, nil:
		return a == b
	}
	return false
}

// show renders a value for a message, as JSON, shortened.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // not inside a UTF-8 sequence
		}
		s = s[:cut] + "..."
	}
	return s
}
