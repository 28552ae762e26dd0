package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// slice replaces text/template's built-in, which cuts a string at byte
// offsets: {{ slice .body 0 2000 }} could cut a character in two and send
// the provider text that is not UTF-8, and over a body shorter than 2000
// bytes it failed the render ("index out of range"). This one cuts a string
// by characters (runes) and an array by elements, and clamps the indices to
// the length: {{ slice .body 0 2000 }} is the first 2000 characters of the
// body, all of it when shorter. {{ slice .x }} is x, {{ slice .x i }} from
// i to the end. An index is a whole number (written in the template, from
// len, which counts a string's characters too, or an input number); a
// negative one, a from greater than the to, a third index or a null value is
// a render error.
func slice(item any, indices ...any) (any, error) {
	if len(indices) > 2 {
		return nil, fmt.Errorf("slice: %d indices: give at most two, from and to, like {{ slice .body 0 2000 }}", len(indices))
	}
	bounds := make([]int, len(indices))
	for i, a := range indices {
		n, err := sliceIndex(a)
		if err != nil {
			return nil, fmt.Errorf("slice: index %d: %w", i+1, err)
		}
		bounds[i] = n
	}
	if len(bounds) == 2 && bounds[0] > bounds[1] {
		return nil, fmt.Errorf("slice: from %d is greater than to %d", bounds[0], bounds[1])
	}
	switch x := item.(type) {
	case string:
		from, to := clampRunes(x, bounds)
		return x[from:to], nil
	case json.Number:
		// An input number reaches templates as json.Number, a string type:
		// the built-in sliced its spelling. So does this one.
		from, to := clampRunes(string(x), bounds)
		return string(x)[from:to], nil
	case []any:
		from, to := clampLen(len(x), bounds)
		return x[from:to], nil
	case []string:
		from, to := clampLen(len(x), bounds)
		return x[from:to], nil
	}
	if isNull(item) {
		return nil, errors.New("slice: the value is null or absent in the input")
	}
	return nil, fmt.Errorf("slice: want a string or an array, got %s", jsonType(item))
}

// sliceIndex is a slice index as an int: a template's integer constant, what
// len returns, or an input number holding a whole number.
func sliceIndex(a any) (int, error) {
	var n int64
	switch x := a.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case json.Number:
		v, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not a whole number", x)
		}
		n = v
	default:
		if isNull(a) {
			return 0, errors.New("the index is null or absent in the input")
		}
		return 0, fmt.Errorf("want a whole number, got %s", jsonType(a))
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	if n > int64(^uint(0)>>1) {
		n = int64(^uint(0) >> 1)
	}
	return int(n), nil
}

// clampLen turns bounds (none, from, or from and to) into offsets within a
// length n.
func clampLen(n int, bounds []int) (from, to int) {
	from, to = 0, n
	if len(bounds) > 0 {
		from = min(bounds[0], n)
	}
	if len(bounds) > 1 {
		to = min(bounds[1], n)
	}
	return from, to
}

// clampRunes turns bounds counted in characters into byte offsets of s,
// clamped to its end; both fall on character boundaries.
func clampRunes(s string, bounds []int) (from, to int) {
	from, to = 0, len(s)
	if len(bounds) > 0 {
		from = runeOffset(s, bounds[0])
	}
	if len(bounds) > 1 {
		to = from + runeOffset(s[from:], bounds[1]-bounds[0])
	}
	return from, to
}

// runeOffset is the byte offset of character n of s, len(s) past its end.
// Invalid UTF-8 counts one byte per character, as range does.
func runeOffset(s string, n int) int {
	off := 0
	for i := 0; i < n && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}
