package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/routerhq/router/internal/spelling"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// A keyword JSON Schema does not know is ignored, as the standard has it, so
// a misspelt one ("additonalProperties": false, "requried", "maxLenght")
// checked nothing and every answer it was meant to refuse passed. In a
// prompt's schema (the router's own files: a typo is never silently
// ignored) checkKeywords refuses, when the prompt loads, a key where a
// keyword goes that is not one but is within an edit or two of one that
// checks something, naming the keyword meant. Other unknown keys (a vendor's
// "x-..." or "nullable", an "example") are left alone, and so is a misspelt
// annotation (title, description...), which checks nothing either way.
// Names under "properties", "$defs", "patternProperties" and the like are
// names, not keywords, and enum, const, default and examples values are
// data. A caller's schema is not checked: the standard ignores what it does
// not know, and callers send schemas written for other implementations.
//
// Its patterns are checked in the same walk: one Go's regular expressions
// (RE2) cannot parse is a *SchemaPatternError, as in a caller's schema,
// rather than the compiler's "is not valid 'regex'".

// annotationKeywords are the keywords that check nothing: a key close to one
// of them is not refused.
var annotationKeywords = []string{
	"$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
	"contentEncoding", "contentMediaType", "contentSchema",
}

// checkingKeywords are the keywords of every draft the compiler knows that
// check something, or name or apply schemas that do.
var checkingKeywords = []string{
	"$schema", "$id", "id", "$ref", "$defs", "definitions", "$anchor", "$dynamicRef", "$dynamicAnchor",
	"$recursiveRef", "$recursiveAnchor", "$vocabulary",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
	"prefixItems", "items", "additionalItems", "contains", "properties", "patternProperties",
	"additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
	"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
	"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
	"maxProperties", "minProperties", "required", "dependentRequired", "format",
}

// maxKeywordProblems is how many misspelt keywords one error lists.
const maxKeywordProblems = 10

// checkKeywords walks a trusted schema document and returns the first pattern
// RE2 cannot parse (a *SchemaPatternError), else an error listing the keys
// that look like misspelt keywords. name names the schema in errors. A
// document that is not JSON passes: the compiler says what is wrong with it.
func checkKeywords(schemaJSON []byte, name string) error {
	doc, ok := decodeSchemaDoc(schemaJSON)
	if !ok {
		return nil
	}
	w := newKeywordWalk(doc, draftOfDocument(doc))
	w.schema(doc, "")
	return w.result(name)
}

// checkDraftKeywords is checkKeywords for a schema whose "$schema" names a
// metaschema rather than a draft, once compiled (root): the compiler reads it
// in the metaschema's draft, which only compiling finds.
func checkDraftKeywords(schemaJSON []byte, name string, root *jsonschema.Schema) error {
	doc, ok := decodeSchemaDoc(schemaJSON)
	if !ok || draftOfDocument(doc) != 0 || draftVersions[root.Draft] == 0 {
		return nil
	}
	w := keywordWalk{draft: draftVersions[root.Draft]}
	w.schema(doc, "")
	return w.result(name)
}

// decodeSchemaDoc decodes a schema document, numbers kept as written; ok is
// false for one that is not JSON.
func decodeSchemaDoc(schemaJSON []byte) (doc any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(schemaJSON))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	return doc, true
}

// result is what the walk found, as checkKeywords returns it.
func (w *keywordWalk) result(name string) error {
	if w.pattern != nil {
		return &SchemaPatternError{Name: name, At: w.patternAt, Err: w.pattern}
	}
	if len(w.problems) == 0 {
		return nil
	}
	more := ""
	if w.more > 0 {
		more = fmt.Sprintf(" (and %d more)", w.more)
	}
	return fmt.Errorf("schema %s: %s%s", name, strings.Join(w.problems, "; "), more)
}

// keywordWalk is what checkKeywords found so far.
type keywordWalk struct {
	draft     int  // the draft the compiler reads the document in (draftVersions); 0: not known
	defaulted bool // the document has no "$schema": the draft is the default
	problems  []string
	more      int
	pattern   *syntax.Error // the first pattern RE2 refuses
	patternAt string
}

// newKeywordWalk is a walk of doc, a document the compiler reads in draft.
func newKeywordWalk(doc any, draft int) keywordWalk {
	m, _ := doc.(map[string]any)
	_, named := m["$schema"]
	return keywordWalk{draft: draft, defaulted: !named}
}

// schema checks v, found where a schema goes at loc (a JSON pointer).
func (w *keywordWalk) schema(v any, loc string) {
	m, ok := v.(map[string]any)
	if !ok {
		return // true, false, or what the compiler refuses
	}
	for _, k := range sortedKeys(m) {
		val := m[k]
		at := loc + "/" + escapeSegment(k)
		if w.draft != 0 {
			if why := unreadInDraft(k, m, w.draft); why != "" {
				w.unread(k, why, loc)
				continue // nor what it holds: the compiler does not read it
			}
		}
		if _, ok := schemaMap[k]; ok {
			if mm, ok := val.(map[string]any); ok {
				for _, n := range sortedKeys(mm) {
					if k == "patternProperties" {
						w.checkPattern(n, at+"/"+escapeSegment(n))
					}
					if _, names := mm[n].([]any); k == "dependencies" && names {
						continue // dependencies' other form: required names
					}
					w.schema(mm[n], at+"/"+escapeSegment(n))
				}
				continue
			}
		}
		if _, ok := schemaList[k]; ok {
			if a, ok := val.([]any); ok {
				for i, e := range a {
					w.schema(e, at+"/"+strconv.Itoa(i))
				}
				continue
			}
		}
		if _, ok := schemaOne[k]; ok {
			w.schema(val, at)
			continue
		}
		if k == "pattern" {
			if src, ok := val.(string); ok {
				w.checkPattern(src, at)
			}
			continue
		}
		if slices.Contains(checkingKeywords, k) || slices.Contains(annotationKeywords, k) {
			continue // a keyword whose value is data
		}
		if meant := misspeltKeyword(k); meant != "" {
			w.misspelt(k, meant, loc)
		}
	}
}

// checkPattern records src, a pattern at loc, when RE2 cannot parse it (one
// too large is left to the compiler, whose message says so).
func (w *keywordWalk) checkPattern(src, loc string) {
	if w.pattern != nil {
		return
	}
	if _, err := parsePattern(src); err != nil {
		if se := (*syntax.Error)(nil); errors.As(err, &se) && se.Code != syntax.ErrLarge {
			w.pattern, w.patternAt = se, loc
		}
	}
}

// misspelt records the key k at loc, close to the keyword meant.
func (w *keywordWalk) misspelt(k, meant, loc string) {
	w.add(loc, func(at string) string {
		return fmt.Sprintf("%q at %s is not a JSON Schema keyword, so nothing would check it: did you mean %q? (keywords are case-sensitive) "+
			"Correct it, or give a key of your own a name starting with \"x-\" (like %q)", k, at, meant, "x-"+strings.TrimLeft(k, "$"))
	})
}

// unread records the keyword k at loc, which the compiler does not read in
// the schema's draft, for the reason why.
func (w *keywordWalk) unread(k, why, loc string) {
	whose := `the draft its "$schema" selects`
	if w.defaulted {
		whose = `the draft of a schema without "$schema"`
	}
	w.add(loc, func(at string) string {
		return fmt.Sprintf("%q at %s is not read in %s, %s, so nothing would check it: %s", k, at, draftNames[w.draft].name, whose, why)
	})
}

// add records the problem message(at) found at loc (at names it), or counts
// it past maxKeywordProblems.
func (w *keywordWalk) add(loc string, message func(at string) string) {
	if len(w.problems) == maxKeywordProblems {
		w.more++
		return
	}
	at := "#" + loc
	if loc == "" {
		at = "the schema's root"
	}
	w.problems = append(w.problems, message(at))
}

// misspeltKeyword is the checking keyword k looks like a misspelling of, or
// "". Case, "$", "-" and "_" aside, k must be within two edits (an adjacent
// swap is one) of a keyword of six letters or more; within one of a shorter
// one, and that one not a changed letter, which mostly makes another word
// ("now", "when" are not "not", "then"; "tpye", "enums" and "ref" are
// "type", "enum" and "$ref") nor, for three letters, one added ("note");
// and the same as one of two letters ("ID").
func misspeltKeyword(k string) string {
	if strings.HasPrefix(strings.ToLower(k), "x-") {
		return ""
	}
	fold := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", "$", "").Replace(strings.ToLower(s))
	}
	fk := fold(k)
	best, bestD := "", -1
	for _, kw := range checkingKeywords {
		fkw := fold(kw)
		d := spelling.Edits(fk, fkw)
		switch {
		case len(fkw) <= 2 && d > 0, len(fkw) < 6 && d > 1, d > 2:
			continue
		case len(fkw) < 6 && d == 1 && len(fk) == len(fkw) && !sameLetters(fk, fkw):
			continue // a changed letter, not a swap
		case len(fkw) <= 3 && len(fk) > len(fkw):
			continue // a word of its own: "note" is not "not"
		}
		if bestD < 0 || d < bestD {
			best, bestD = kw, d
		}
	}
	return best
}

// sameLetters reports whether a and b hold the same bytes in some order.
func sameLetters(a, b string) bool {
	x, y := []byte(a), []byte(b)
	slices.Sort(x)
	slices.Sort(y)
	return string(x) == string(y)
}

// checkReferencedKeywords is checkKeywords for the documents the compiler
// read while compiling root (CompileSchemaReading), each named by its path.
// Such a file need not be a schema at its root: a file of shared definitions
// is often a plain map of named schemas ({"Item": {...}, "Type": {...}},
// referred to as "common.json#/Item"), whose names are not keywords ("Item"
// is no misspelt "items"). So in each document only what the compiled schema
// uses is walked: every subtree a "$ref" (or dynamic reference) points into,
// the whole document when one names the file. A document none of whose
// subschemas the schema uses (a "$schema" metaschema file) is walked as a
// schema, or, when its root holds no JSON Schema keyword, as a map of named
// schemas.
func checkReferencedKeywords(root *jsonschema.Schema, docs []Document) error {
	if len(docs) == 0 {
		return nil
	}
	used := map[string][]string{}            // document URL -> the pointers of the subschemas used in it
	drafts := map[string]*jsonschema.Draft{} // document URL -> the draft the compiler read it in
	for _, n := range newSchemaGraph(root).nodes {
		if u, frag, ok := strings.Cut(n.Location, "#"); ok {
			used[u] = append(used[u], frag)
			drafts[u] = n.Draft
		}
	}
	for _, d := range docs {
		doc, ok := decodeSchemaDoc(d.Bytes)
		if !ok {
			continue // the compiler took it; what it is is its business
		}
		// Each document is read in its own draft: its "$schema", or
		// 2020-12 (the compiler's default, not the referring schema's).
		draft := draftOfDocument(doc)
		if draft == 0 {
			draft = draftVersions[drafts[d.URL]]
		}
		w := newKeywordWalk(doc, draft)
		if !w.usedSubtrees(doc, used[d.URL]) {
			w = newKeywordWalk(doc, draft)
			w.document(doc)
		}
		if err := w.result(strings.TrimPrefix(d.URL, "file://")); err != nil {
			return err
		}
	}
	return nil
}

// usedSubtrees walks the subtrees of doc at ptrs (JSON pointers, as the
// compiler writes them), each once: one inside another is walked with it.
// It reports false, having walked nothing, when there are none or one does
// not resolve in doc.
func (w *keywordWalk) usedSubtrees(doc any, ptrs []string) bool {
	if len(ptrs) == 0 {
		return false
	}
	at := map[string]any{} // by pointer, written as errors write it
	for _, p := range ptrs {
		segs, ok := pointerSegments(p)
		if !ok {
			return false
		}
		v, ok := resolveSegments(doc, segs)
		if !ok {
			return false
		}
		loc := ""
		for _, seg := range segs {
			loc += "/" + escapeSegment(seg)
		}
		at[loc] = v
	}
	for _, loc := range sortedKeys(at) {
		inside := false
		for i := range len(loc) {
			if loc[i] == '/' {
				if _, ok := at[loc[:i]]; ok {
					inside = true // walked with the subtree holding it
					break
				}
			}
		}
		if !inside {
			w.schema(at[loc], loc)
		}
	}
	return true
}

// document walks doc, a document read for a schema whose subschemas the
// schema does not use, as a schema; or, when its root is an object holding
// no JSON Schema keyword, as a map of named schemas.
func (w *keywordWalk) document(doc any) {
	m, ok := doc.(map[string]any)
	if !ok {
		return
	}
	for k := range m {
		if slices.Contains(checkingKeywords, k) || slices.Contains(annotationKeywords, k) {
			w.schema(doc, "")
			return
		}
	}
	for _, k := range sortedKeys(m) {
		w.schema(m[k], "/"+escapeSegment(k))
	}
}

// pointerSegments splits the JSON pointer p into its segments, unescaped;
// they may also be percent-encoded, as in a URL's fragment. ok is false for
// what is not a pointer (an anchor).
func pointerSegments(p string) (segs []string, ok bool) {
	if p == "" {
		return nil, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		segs = append(segs, strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~"))
	}
	return segs, true
}

// resolveSegments is the value in doc at the pointer of segs.
func resolveSegments(doc any, segs []string) (any, bool) {
	v := doc
	for _, seg := range segs {
		switch c := v.(type) {
		case map[string]any:
			e, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
