package contract

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pointer is a parsed rule path: a JSON pointer whose segments may be "*" (every
// element of an array). The empty pointer (written "$" or "") is the document.
type pointer struct {
	raw  string
	segs []string
	wild bool
}

func parsePointer(p string) (pointer, error) {
	if p == "" || p == "$" {
		return pointer{raw: "$"}, nil
	}
	if !strings.HasPrefix(p, "/") {
		return pointer{}, fmt.Errorf("path %q must be a JSON pointer starting with \"/\" (for example /total or /line_items/*/amount)", p)
	}
	ptr := pointer{raw: p}
	for _, s := range strings.Split(p[1:], "/") {
		if s == "" {
			return pointer{}, fmt.Errorf("path %q has an empty segment; remove the doubled or trailing \"/\"", p)
		}
		if s == "*" {
			ptr.wild = true
		}
		if bad := badEscape(s); bad != "" {
			return pointer{}, fmt.Errorf("path %q: %q is not an escape: in a JSON pointer \"~\" must be followed by 0 (for a \"~\" in the key) or 1 (for a \"/\"), as in /a~0b for the key \"a~b\"", p, bad)
		}
		s = strings.ReplaceAll(s, "~1", "/")
		s = strings.ReplaceAll(s, "~0", "~")
		ptr.segs = append(ptr.segs, s)
	}
	return ptr, nil
}

// badEscape returns the first "~" of seg not followed by 0 or 1, with the
// character after it (RFC 6901 has only ~0 and ~1), or "" when there is none.
func badEscape(seg string) string {
	for i := 0; i < len(seg); i++ {
		if seg[i] != '~' {
			continue
		}
		if i+1 == len(seg) {
			return "~"
		}
		if seg[i+1] != '0' && seg[i+1] != '1' {
			_, n := utf8.DecodeRuneInString(seg[i+1:])
			return seg[i : i+1+n]
		}
		i++
	}
	return ""
}

// escapeKey escapes one pointer segment (RFC 6901).
func escapeKey(k string) string {
	if strings.ContainsAny(k, "~/") {
		k = strings.ReplaceAll(k, "~", "~0")
		k = strings.ReplaceAll(k, "/", "~1")
	}
	return k
}

// joinPath appends one key or index to a concrete path ("$" is the root).
func joinPath(base, key string) string {
	if base == "$" || base == "" {
		return "/" + escapeKey(key)
	}
	return base + "/" + escapeKey(key)
}

// resolve calls fn for every value in doc the pointer reaches, with its concrete
// path. Absent keys, out-of-range indexes and type mismatches reach nothing.
func resolve(doc any, segs []string, at string, fn func(path string, v any)) {
	if len(segs) == 0 {
		fn(at, doc)
		return
	}
	seg, rest := segs[0], segs[1:]
	switch x := doc.(type) {
	case map[string]any:
		if v, ok := x[seg]; ok {
			resolve(v, rest, joinPath(at, seg), fn)
		}
	case []any:
		if seg == "*" {
			for i, v := range x {
				resolve(v, rest, joinPath(at, strconv.Itoa(i)), fn)
			}
			return
		}
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			resolve(x[i], rest, joinPath(at, seg), fn)
		}
	}
}

// lookupOne returns the single value a wildcard-free pointer reaches.
func lookupOne(doc any, segs []string) (v any, found bool) {
	resolve(doc, segs, "$", func(_ string, x any) { v, found = x, true })
	return v, found
}
