package prompt

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// unevaluatedClosed returns the names a schema document closed with a
// top-level "unevaluatedProperties": false allows at its top level: those
// declared in the "properties" it sees, its own and those of the schemas
// that apply with it (a "$ref" within the document, "allOf" members) or in
// their branches ("anyOf", "oneOf", "if", "then", "else",
// "dependentSchemas"). It is the way to close a schema whose properties come
// partly from an "allOf" or a "$ref", where "additionalProperties": false
// would refuse those. ok is false when the document's draft does not read
// the keyword (only 2019-09 and 2020-12 do; 2020-12 when "$schema" is left
// out), and when a schema it sees could admit another name or the walk
// cannot follow it: "patternProperties", an "additionalProperties" or
// "unevaluatedProperties" that is not false, a reference to another document,
// an anchor or a dynamic reference, a "$id" (a new base for references):
// the check then stays off rather than refuse a name the schema admits.
func unevaluatedClosed(doc *jnode) (names []string, ok bool) {
	if u := doc.get("unevaluatedProperties"); u == nil || !isFalse(u) || !readsUnevaluated(doc) {
		return nil, false
	}
	var seen []*jnode
	open := false
	var walk func(n *jnode, root bool)
	walk = func(n *jnode, root bool) {
		if open || n == nil || n.kind != 'o' || slices.Contains(seen, n) {
			return // a boolean schema declares nothing
		}
		if seen = append(seen, n); len(seen) > 512 {
			open = true
			return
		}
		for _, k := range []string{"patternProperties", "$dynamicRef", "$recursiveRef"} {
			if n.get(k) != nil {
				open = true
				return
			}
		}
		if ap := n.get("additionalProperties"); ap != nil && !isFalse(ap) || !root && (n.get("$id") != nil || n.get("unevaluatedProperties") != nil && !isFalse(n.get("unevaluatedProperties"))) {
			open = true
			return
		}
		if props := n.get("properties"); props != nil && props.kind == 'o' {
			for _, k := range props.keys {
				if !slices.Contains(names, k) {
					names = append(names, k)
				}
			}
		}
		if r := n.get("$ref"); r != nil {
			s, _ := r.str()
			target := localPointer(doc, s)
			if target == nil {
				open = true
				return
			}
			walk(target, false)
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if l := n.get(k); l != nil && l.kind == 'a' {
				for _, b := range l.items {
					walk(b, false)
				}
			}
		}
		for _, k := range []string{"if", "then", "else"} {
			walk(n.get(k), false)
		}
		if ds := n.get("dependentSchemas"); ds != nil && ds.kind == 'o' {
			for _, v := range ds.vals {
				walk(v, false)
			}
		}
	}
	walk(doc, true)
	if open {
		return nil, false
	}
	return names, true
}

func isFalse(n *jnode) bool { return n != nil && n.kind == 's' && n.scalar == false }

// readsUnevaluated reports whether the draft the compiler reads doc in
// reads "unevaluatedProperties": 2019-09 or 2020-12, the default when
// "$schema" is left out (as contract matches "$schema").
func readsUnevaluated(doc *jnode) bool {
	v := doc.get("$schema")
	if v == nil {
		return true
	}
	u, _ := v.str()
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = "https://" + rest
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), "#")
	switch u {
	case "https://json-schema.org/schema", "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema":
		return true
	}
	return false
}

// localPointer returns the schema a "$ref" of "#" or "#/json/pointer" names
// in doc, or nil for any other reference or a pointer to nothing.
func localPointer(doc *jnode, ref string) *jnode {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if p, err := url.PathUnescape(p); err == nil && p == "" {
		return doc
	}
	if !strings.HasPrefix(p, "/") {
		return nil // an anchor
	}
	n := doc
	for _, seg := range strings.Split(p[1:], "/") {
		if s, err := url.PathUnescape(seg); err == nil {
			seg = s
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch n.kind {
		case 'o':
			n = n.get(seg)
		case 'a':
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.items) {
				return nil
			}
			n = n.items[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}
