package jsontext

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DuplicateKeyError names an object member whose name an earlier member of
// the same object already has. JSON readers differ on such an object: Go's
// encoding/json and PostgreSQL's jsonb keep the last value, others the first,
// some refuse it; so a text that holds one means different things to
// different readers.
type DuplicateKeyError struct {
	Offset  int    // byte offset of the second member's name in the text
	Pointer string // JSON pointer of the object that holds both ("" for the text itself)
	Key     string // the member's name, unescaped
}

func (e *DuplicateKeyError) Error() string {
	at := "the object"
	if e.Pointer != "" {
		at = "the object at " + e.Pointer
	}
	return fmt.Sprintf("%s has the key %s twice (the second at byte %d)", at, quoteCut(e.Key, 100), e.Offset)
}

// keySpan is one member name of an object: its quoted text b[start:end].
type keySpan struct {
	start, end int
	escaped    bool // it holds a backslash
}

type dupLevel struct {
	object bool
	first  int                 // index in keys of the object's first member
	index  int                 // an array's current element
	seen   map[string]struct{} // an object's names once it has more than smallObject
}

// smallObject is how many members an object may have before its names are
// kept in a map: below it, each name is compared with the ones before it.
const smallObject = 32

// DuplicateKey returns the first member of an object in JSON text b whose
// name (unescaped: "\u0070" is "p") an earlier member of the same object
// already has; nil when there is none. b must be valid JSON (a parser has
// accepted it): it is walked without being checked.
//
// It is cheap on the hot path: one pass over the text that allocates nothing
// for objects of up to smallObject members nested up to 32 deep. Names are
// compared as written, and unescaped only when one of the two holds a
// backslash.
func DuplicateKey(b []byte) *DuplicateKeyError {
	var keyBuf [64]keySpan
	var levelBuf [32]dupLevel
	keys, levels := keyBuf[:0], levelBuf[:0]
	wantKey := false // the next string is an object's member name
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			end, escaped := stringSpan(b, i)
			if wantKey && len(levels) > 0 {
				wantKey = false
				top := &levels[len(levels)-1]
				k := keySpan{start: i, end: end, escaped: escaped}
				if seenKey(b, keys[top.first:], top, k) {
					return dupError(b, keys, levels, k)
				}
				keys = append(keys, k)
			}
			i = end
		case '{', '[':
			levels = append(levels, dupLevel{object: b[i] == '{', first: len(keys)})
			wantKey = b[i] == '{'
			i++
		case '}', ']':
			if len(levels) > 0 {
				keys = keys[:levels[len(levels)-1].first]
				levels = levels[:len(levels)-1]
			}
			wantKey = false
			i++
		case ',':
			if len(levels) > 0 {
				top := &levels[len(levels)-1]
				top.index++
				wantKey = top.object
			}
			i++
		default:
			i++
		}
	}
	return nil
}

// seenKey reports whether the object whose names so far are prev (top its
// level) already has a member named k.
func seenKey(b []byte, prev []keySpan, top *dupLevel, k keySpan) bool {
	if top.seen == nil && len(prev) < smallObject {
		var kBuf, pBuf [64]byte
		name := b[k.start:k.end]
		var unescaped []byte // k's name, unescaped once it is needed
		for _, p := range prev {
			if !p.escaped && !k.escaped {
				if bytes.Equal(b[p.start:p.end], name) {
					return true
				}
				continue
			}
			if !k.escaped && p.end-p.start < len(name) || !p.escaped && len(name) < p.end-p.start {
				continue // an escape only makes a name longer as written
			}
			if unescaped == nil {
				unescaped = appendName(kBuf[:0], b, k)
			}
			if bytes.Equal(appendName(pBuf[:0], b, p), unescaped) {
				return true
			}
		}
		return false
	}
	if top.seen == nil {
		top.seen = make(map[string]struct{}, 2*len(prev))
		for _, p := range prev {
			top.seen[keyName(b, p)] = struct{}{}
		}
	}
	n := keyName(b, k)
	if _, ok := top.seen[n]; ok {
		return true
	}
	top.seen[n] = struct{}{}
	return false
}

// keyName is the unescaped name of member k.
func keyName(b []byte, k keySpan) string { return string(appendName(nil, b, k)) }

// appendName appends the unescaped name of member k to dst, as
// encoding/json decodes it (a lone surrogate escape is U+FFFD).
func appendName(dst, b []byte, k keySpan) []byte {
	q := b[k.start+1 : k.end-1]
	if !k.escaped {
		return append(dst, q...)
	}
	return AppendUnescaped(dst, q)
}

// stringSpan is the offset just past the string that starts at b[at] (a
// quote), or len(b) when it does not end, and whether it holds a backslash.
func stringSpan(b []byte, at int) (end int, escaped bool) {
	rest := b[at+1:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return len(b), bytes.IndexByte(rest, '\\') >= 0
	}
	if bytes.IndexByte(rest[:q], '\\') < 0 {
		return at + 1 + q + 1, false
	}
	return stringEnd(b, at), true
}

// dupError describes the member k of the innermost object of levels, whose
// enclosing members are in keys.
func dupError(b []byte, keys []keySpan, levels []dupLevel, k keySpan) *DuplicateKeyError {
	var ptr strings.Builder
	for l := 0; l+1 < len(levels); l++ {
		ptr.WriteByte('/')
		if !levels[l].object {
			ptr.WriteString(strconv.Itoa(levels[l].index))
			continue
		}
		// The object's current member is the last name it has before the
		// next level's.
		name := keyName(b, keys[levels[l+1].first-1])
		name = strings.ReplaceAll(name, "~", "~0")
		ptr.WriteString(strings.ReplaceAll(name, "/", "~1"))
	}
	return &DuplicateKeyError{Offset: k.start, Pointer: ptr.String(), Key: keyName(b, k)}
}

// quoteCut is s quoted, its first n bytes at most (whole characters), then "…".
func quoteCut(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "…"
}
