package prompt

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A schema file may "$ref" schemas in files beside it
// ("common.json#/$defs/item"). The router's compiler would load them itself,
// but a provider asked for json_schema output receives only the schema's text
// and cannot: OpenAI structured outputs and vLLM answer 400 to a reference to
// another document. So at load every referenced schema is copied into the
// root's "$defs" and the reference rewritten to "#/$defs/<name>": the result
// is self-contained, and it is what both the providers and the router's
// validator use, so the two always judge by the same schema.
//
// What cannot be copied faithfully is refused (inlineError.unsupported): a
// reference to a URL rather than a file, a fragment that is an anchor rather
// than a JSON pointer, "$id", anchors or dynamic references in the copied
// documents (they change how references resolve), and documents of different
// drafts.

// schemaDraft is the draft named by a document's "$schema", by its year; a
// document without one is 2020-12, like the compiler's default.
func schemaDraft(doc *jnode) string {
	s, ok := doc.get("$schema").str()
	if !ok {
		return "2020-12"
	}
	u := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://"), "#")
	switch u {
	case "json-schema.org/draft/2020-12/schema":
		return "2020-12"
	case "json-schema.org/draft/2019-09/schema":
		return "2019-09"
	}
	return s
}

// inlineError is why a schema's references could not be copied into it.
// unsupported means the files are fine but the construct cannot be copied
// faithfully; otherwise a referenced file or location is wrong, and the
// compiler would have failed on it too.
type inlineError struct {
	file, ref   string // the document holding the reference, and the reference
	msg         string
	unsupported bool
}

func (e *inlineError) Error() string {
	if e.ref == "" {
		return e.file + ": " + e.msg
	}
	return fmt.Sprintf("%s: \"$ref\": %q: %s", e.file, e.ref, e.msg)
}

type refTarget struct{ file, ptr string }

type inliner struct {
	root    string            // the root file's path
	draft   string            // the root's draft
	docs    map[string]*jnode // referenced files, parsed
	names   map[refTarget]string
	taken   map[string]bool // names in the root's $defs
	defs    *jnode          // the root's $defs, once created
	out     *jnode          // the root's copy being rewritten
	origins []string        // "#/$defs/item is common.json#/$defs/item", for compile errors
}

// inlineRefs returns the self-contained form of the schema document root,
// read from file: root itself (changed false) when it refers to no other
// document, else a copy in which every referenced schema is under "$defs".
// origins says where each added definition came from.
func inlineRefs(file string, root *jnode) (out *jnode, origins []string, changed bool, err error) {
	if !refersOutside(root) {
		return root, nil, false, nil
	}
	in := &inliner{root: file, draft: schemaDraft(root), docs: map[string]*jnode{}, names: map[refTarget]string{}, taken: map[string]bool{}}
	if in.draft != "2020-12" && in.draft != "2019-09" {
		return nil, nil, false, &inlineError{file: file, msg: fmt.Sprintf(`"$schema" %q: references to other files can only be copied into a draft 2020-12 or 2019-09 schema`, in.draft), unsupported: true}
	}
	if err := checkCopyable(file, root, true); err != nil {
		return nil, nil, false, err
	}
	in.out = root.clone()
	if d := in.out.get("$defs"); d != nil {
		if d.kind != 'o' {
			return nil, nil, false, &inlineError{file: file, msg: `"$defs" is not an object`}
		}
		in.defs = d
		for _, k := range d.keys {
			in.taken[k] = true
		}
	}
	if err := in.walk(in.out, file, false); err != nil {
		return nil, nil, false, err
	}
	return in.out, in.origins, true, nil
}

// Keywords whose values are schemas, by shape (drafts 2019-09 and 2020-12).
var (
	schemaMapKeywords = map[string]bool{"$defs": true, "definitions": true, "properties": true, "patternProperties": true, "dependentSchemas": true, "dependencies": true}
	schemaKeywords    = map[string]bool{"additionalProperties": true, "propertyNames": true, "contains": true, "not": true, "if": true, "then": true, "else": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true, "additionalItems": true, "items": true}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
)

// subschemas calls f for each schema directly under the schema n, with its
// keyword. Values of other keywords (enum, const, default, examples, unknown
// ones) are data, not schemas, and are not visited: a "$ref" there means
// nothing to the compiler either.
func subschemas(n *jnode, f func(kw string, s *jnode) error) error {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		v := n.vals[i]
		switch {
		case schemaMapKeywords[k] && v.kind == 'o':
			for _, s := range v.vals {
				if err := f(k, s); err != nil {
					return err
				}
			}
		case schemaListKeywords[k] && v.kind == 'a':
			for _, s := range v.items {
				if err := f(k, s); err != nil {
					return err
				}
			}
		case schemaKeywords[k] && v.kind == 'o':
			if err := f(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// refersOutside reports whether a schema holds a "$ref" that is not a
// fragment of its own document.
func refersOutside(n *jnode) bool {
	if r, ok := n.get("$ref").str(); ok && !strings.HasPrefix(r, "#") {
		return true
	}
	found := false
	_ = subschemas(n, func(_ string, s *jnode) error {
		found = found || refersOutside(s)
		return nil
	})
	return found
}

// checkCopyable refuses the keywords that change how references resolve in a
// document whose references are rewritten (root) or which is copied into
// another (a referenced file).
func checkCopyable(file string, n *jnode, root bool) error {
	refused := []string{"$id"}
	if !root {
		refused = append(refused, "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef")
	}
	for _, kw := range refused {
		if v := n.get(kw); v != nil {
			what := "a document whose references to other files are copied into it"
			if !root {
				what = "a document referred to from another schema file"
			}
			return &inlineError{file: file, msg: fmt.Sprintf("%q cannot be used in %s (it changes how references resolve); remove it and refer by file name and JSON pointer", kw, what), unsupported: true}
		}
	}
	return subschemas(n, func(_ string, s *jnode) error { return checkCopyable(file, s, root) })
}

// walk rewrites the references of the schema n, which comes from file (the
// root, or a copy from a referenced file). In a copy, "$defs" and
// "definitions" are dropped (every reference into them, from anywhere, now
// points at its own definition in the root), and so is "$schema" (the root's
// applies; load checked that it is the same draft).
func (in *inliner) walk(n *jnode, file string, copied bool) error {
	if n.kind != 'o' {
		return nil
	}
	if copied {
		for _, kw := range []string{"$defs", "definitions", "$schema"} {
			if i := slices.Index(n.keys, kw); i >= 0 {
				n.keys = slices.Delete(n.keys, i, i+1)
				n.vals = slices.Delete(n.vals, i, i+1)
			}
		}
	}
	if r, ok := n.get("$ref").str(); ok && (copied || !strings.HasPrefix(r, "#")) {
		to, err := in.resolve(file, r)
		if err != nil {
			return err
		}
		n.set("$ref", &jnode{kind: 's', scalar: to})
	}
	return subschemas(n, func(_ string, s *jnode) error { return in.walk(s, file, copied) })
}

// resolve returns what the reference ref, written in file, becomes in the
// root: "#..." into the root itself, else "#/$defs/<name>" of a copy of its
// target.
func (in *inliner) resolve(file, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.RawQuery != "" || strings.HasPrefix(u.Path, "/") {
		return "", &inlineError{file: file, ref: ref, unsupported: true,
			msg: "only a file beside the schema and a JSON pointer in it (like \"common.json#/$defs/item\") can be copied into the schema providers receive"}
	}
	if u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/") {
		return "", &inlineError{file: file, ref: ref, unsupported: true,
			msg: fmt.Sprintf("the fragment %q is an anchor, not a JSON pointer: refer to the location instead (like \"#/$defs/%s\")", u.Fragment, u.Fragment)}
	}
	target := file
	if u.Path != "" {
		target = filepath.Join(filepath.Dir(file), filepath.FromSlash(u.Path))
	}
	if target == in.root {
		if i := strings.IndexByte(ref, '#'); i >= 0 {
			return ref[i:], nil
		}
		return "#", nil
	}
	doc, err := in.load(target, file, ref)
	if err != nil {
		return "", err
	}
	t := refTarget{target, u.Fragment}
	if name, ok := in.names[t]; ok {
		return "#/$defs/" + name, nil
	}
	node, ok := lookupPointer(doc, u.Fragment)
	if !ok {
		return "", &inlineError{file: file, ref: ref, msg: fmt.Sprintf("%s has nothing at the JSON pointer %q", relName(file, target), u.Fragment)}
	}
	name := in.pick(target, u.Fragment)
	in.names[t] = name
	in.taken[name] = true
	if in.defs == nil {
		in.defs = &jnode{kind: 'o'}
		in.out.set("$defs", in.defs)
	}
	c := node.clone()
	in.defs.set(name, c)
	in.origins = append(in.origins, fmt.Sprintf("#/$defs/%s is %s#%s", name, relName(in.root, target), u.Fragment))
	return "#/$defs/" + name, in.walk(c, target, true)
}

// load reads and checks a referenced file once.
func (in *inliner) load(target, from, ref string) (*jnode, error) {
	if doc, ok := in.docs[target]; ok {
		return doc, nil
	}
	b, err := os.ReadFile(target)
	if err != nil {
		return nil, &inlineError{file: from, ref: ref, msg: err.Error()}
	}
	doc, err := parseSchemaJSON(trimBOM(b))
	if err != nil {
		what := "not valid JSON: "
		if de := (*duplicateKeyError)(nil); errors.As(err, &de) {
			what = ""
		}
		return nil, &inlineError{file: target, msg: fmt.Sprintf("%s%v (referred to by \"$ref\": %q in %s)", what, err, ref, relName(in.root, from))}
	}
	if d := schemaDraft(doc); d != in.draft {
		return nil, &inlineError{file: target, unsupported: true,
			msg: fmt.Sprintf("its draft (%s) is not the one of %s (%s): the copy would be judged by other rules; give both the same \"$schema\"", d, relName(target, in.root), in.draft)}
	}
	if err := checkCopyable(target, doc, false); err != nil {
		return nil, err
	}
	in.docs[target] = doc
	return doc, nil
}

// pick names the definition of a copied target: the last name of a pointer
// into "$defs" or "definitions" ("item"), the file's name for a whole file
// ("common"), else the file's name and the pointer's tokens; made unique
// among the root's definitions.
func (in *inliner) pick(file, ptr string) string {
	stem := sanitizeDefName(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	toks := pointerTokens(ptr)
	var base string
	switch n := len(toks); {
	case n == 0:
		base = stem
	case n >= 2 && (toks[n-2] == "$defs" || toks[n-2] == "definitions"):
		base = sanitizeDefName(toks[n-1])
	default:
		base = stem + "_" + sanitizeDefName(strings.Join(toks, "_"))
	}
	for _, c := range []string{base, stem + "_" + base} {
		if !in.taken[c] {
			return c
		}
	}
	for i := 2; ; i++ {
		if c := base + "_" + strconv.Itoa(i); !in.taken[c] {
			return c
		}
	}
}

// sanitizeDefName keeps letters, digits, '_' and '-' (what providers accept
// in names, and nothing a JSON pointer or URL must escape).
func sanitizeDefName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "def"
	}
	return string(b)
}

// pointerTokens splits an RFC 6901 pointer ("" is the whole document).
func pointerTokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

func lookupPointer(doc *jnode, ptr string) (*jnode, bool) {
	n := doc
	for _, t := range pointerTokens(ptr) {
		switch n.kind {
		case 'o':
			if n = n.get(t); n == nil {
				return nil, false
			}
		case 'a':
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n.items) || t != strconv.Itoa(i) {
				return nil, false
			}
			n = n.items[i]
		default:
			return nil, false
		}
	}
	return n, true
}

// relName names file relative to the directory of from, for messages.
func relName(from, file string) string {
	if r, err := filepath.Rel(filepath.Dir(from), file); err == nil {
		return filepath.ToSlash(r)
	}
	return file
}

func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, utf8BOM) }
