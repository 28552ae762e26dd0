package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent use.
type Schema struct {
	url       string
	schema    *jsonschema.Schema
	footprint int64       // for a caller's schema, the bytes it holds, estimated (see schemacache.go)
	bounds    *boundTexts // its numeric bounds, for messages (see schemabound_message.go)
}

// ErrExternalRef is returned by CompileRequestSchema for a schema that refers to
// a document outside itself. Its message is the same whatever the reference
// names and whether or not it exists, so a caller learns nothing about the
// router's files or network from it.
var ErrExternalRef = errors.New(`external references are not allowed: a schema sent with a request must be self-contained ("$ref" only to "#..." fragments or to an "$id" the schema itself defines; no file, http or other URL, and no custom "$schema" URL)`)

// requestSchemaURL names every caller-supplied schema inside the compiler. It is
// an absolute URL of a scheme nothing loads, so a relative "$ref" resolves to
// another mem: URL, never to a file beside the router's working directory.
const requestSchemaURL = "mem:///request/schema.json"

// CompileSchema compiles a trusted JSON Schema document (a prompt's, from the
// router's own files) once. url names the document in errors and is the base
// for relative $refs (a file path resolves refs to files beside it); "" uses an
// in-memory name. Without "$schema" the draft is 2020-12. "format" is asserted
// (a "date" must be a date), unlike the 2020-12 default, so a format the
// router does not know ("datetime" for "date-time") is an error naming the
// closest one it knows.
//
// A schema that arrives with a request must be compiled with
// CompileRequestSchema instead, which loads nothing.
func CompileSchema(schemaJSON []byte, url string) (*Schema, error) {
	if url == "" {
		url = "mem:///schema.json"
	}
	return compile(schemaJSON, url, url, nil, false)
}

// Document is a document the compiler read while compiling a schema
// (CompileSchemaReading): its absolute URL and its bytes as read.
type Document struct {
	URL   string
	Bytes []byte
}

// CompileSchemaReading is CompileSchema that also returns every document the
// compiler read besides the schema itself, in the order read: the files a
// "$ref" reaches, resolved as the compiler resolves it (against the "$id" in
// force), and from those in turn, and a "$schema" metaschema file — exactly
// the documents the compiled schema uses (a prompt's digest covers them).
func CompileSchemaReading(schemaJSON []byte, url string) (*Schema, []Document, error) {
	if url == "" {
		url = "mem:///schema.json"
	}
	var docs []Document
	load := func(u string) (io.ReadCloser, error) {
		r, err := jsonschema.LoadURL(u) // the library's loaders (files), as CompileSchema's
		if err != nil {
			if !strings.HasPrefix(u, "file://") {
				return nil, fmt.Errorf("%w: the router loads no schema from the network, only files; save it as a file beside the schema and refer to it by its relative path (like \"common.json#/$defs/item\"), or copy it into \"$defs\"", err)
			}
			return nil, err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		docs = append(docs, Document{URL: u, Bytes: b})
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	s, err := compile(schemaJSON, url, url, load, false)
	if err != nil {
		return nil, nil, err
	}
	// The files it refers to are the schema too (compile checked its own
	// document only): what of them the schema uses.
	if err := checkReferencedKeywords(s.schema, docs); err != nil {
		return nil, nil, err
	}
	return s, docs, nil
}

// CompileSelfContainedSchema is CompileSchema for a trusted schema that must
// load nothing (a prompt's schema with the files it refers to copied in): a
// "$ref" to another document fails with ErrExternalRef, as for
// CompileRequestSchema. name says where the schema came from, in errors.
func CompileSelfContainedSchema(schemaJSON []byte, name string) (*Schema, error) {
	return compileSelfContained(schemaJSON, name, false)
}

// CompileRequestSchema compiles a JSON Schema supplied by a caller (for example
// a chat completion's response_format.json_schema). Nothing is loaded from
// outside the document: a "$ref" (or "$schema") that names another document
// fails with ErrExternalRef. name says where the schema came from, in errors.
// A schema beyond the bounds on its size (MaxSchemaProperties and the rest)
// is refused with a *SchemaBoundsError before it is compiled, one with a
// pattern Go's regular expressions cannot parse where a schema goes with a
// *SchemaPatternError, also before, and one that
// would apply more than MaxSchemaApplications of its subschemas to one value
// of an answer after (see MaxSchemaApplications). A "format" the router does
// not know is an annotation, as the standard has it.
//
// It keeps nothing (a schema for no owner): CompileRequestSchemaFor compiles
// through an owner's part of a process-wide cache (schemacache.go), where the
// same owner's same bytes and name give the same *Schema, or the same error,
// without compiling again — callers send the same schema with every request.
func CompileRequestSchema(schemaJSON []byte, name string) (*Schema, error) {
	return requestSchemas.get(schemaJSON, name)
}

// compileRequestSchema is CompileRequestSchema without the cache.
func compileRequestSchema(schemaJSON []byte, name string) (*Schema, error) {
	// Compiling costs time in proportion to a schema's size, and a body can
	// hold hundreds of thousands of subschemas: measure it first (see
	// schemabounds.go).
	if err := checkSchemaBounds(schemaJSON, name); err != nil {
		return nil, err
	}
	return compileSelfContained(schemaJSON, name, true)
}

func compileSelfContained(schemaJSON []byte, name string, caller bool) (*Schema, error) {
	deny := func(string) (io.ReadCloser, error) { return nil, errExternalLoad }
	s, err := compile(schemaJSON, requestSchemaURL, name, deny, caller)
	if errors.Is(err, errExternalLoad) {
		return nil, fmt.Errorf("schema %s: %w", name, ErrExternalRef)
	}
	return s, err
}

// errExternalLoad is what the request loader answers; it never leaves the package.
var errExternalLoad = errors.New("external load refused")

// compile compiles a schema document. A caller's schema (caller) is bounded
// in what validating against it costs; any other is checked for formats the
// router does not know, misspelt keywords and patterns RE2 cannot parse
// (checkKeywords).
func compile(schemaJSON []byte, url, name string, load func(string) (io.ReadCloser, error), caller bool) (*Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	regexFormatIsAnnotation(c)
	strictFormats(c)
	// A prompt's "description" is quoted in a failed pattern's message
	// (patternText); a caller's schema keeps only what validating needs.
	c.ExtractAnnotations = !caller
	c.LoadURL = load // nil: the library's loaders (files), for trusted schemas only
	if err := c.AddResource(url, bytes.NewReader(schemaJSON)); err != nil {
		return nil, fmt.Errorf("schema %s is not valid JSON: %w", name, err)
	}
	if !caller {
		// Before compiling: the compiler would only say a pattern RE2
		// cannot parse "is not valid 'regex'" (schemakeywords.go).
		if err := checkKeywords(schemaJSON, name); err != nil {
			return nil, err
		}
	}
	s, err := c.Compile(url)
	if err != nil {
		if errors.Is(err, errExternalLoad) {
			return nil, errExternalLoad
		}
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			var lines []string
			var vs schemaViolations
			dropTypeAdvice(ve)
			flatten(ve, &vs, nil)
			doc, _ := ParseJSON(schemaJSON)
			for _, v := range vs.result() {
				lines = append(lines, fmt.Sprintf("at %s: %s%s", v.Path, v.Message, typeSpelling(doc, v.Path)))
			}
			return nil, fmt.Errorf("schema %s is not a valid JSON Schema: %s", name, strings.Join(lines, "; "))
		}
		if where := missingRef(err, schemaJSON); where != "" {
			return nil, fmt.Errorf("schema %s does not compile: %s", name, where)
		}
		return nil, fmt.Errorf("schema %s does not compile: %w", name, err)
	}
	if !caller {
		// A "$schema" naming a metaschema: its draft is known now.
		if err := checkDraftKeywords(schemaJSON, name, s); err != nil {
			return nil, err
		}
	}
	g := newSchemaGraph(s)
	out := &Schema{url: name, schema: s, bounds: newBoundTexts(g)}
	if caller {
		if err := g.checkCost(); err != nil {
			return nil, fmt.Errorf("schema %s is too costly to validate against: %w", name, err)
		}
		out.footprint = g.footprint(len(schemaJSON))
	} else if err := g.checkFormats(); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return out, nil
}

// URL is the name the schema was compiled under.
func (s *Schema) URL() string { return s.url }

// Check validates a decoded document (numbers as json.Number, see ParseJSON) and
// returns its leaf failures, sorted by path (see lessViolation), each once. Rules
// are "schema.<keyword>". Past MaxViolations, the first ones are listed and a
// last violation, rule RuleTruncated, says how many more there were.
func (s *Schema) Check(doc any) []Violation {
	err := s.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Rule: "schema", Path: "$", Message: err.Error()}}
	}
	var vs schemaViolations
	flatten(ve, &vs, s.bounds)
	return vs.result()
}

// Properties returns the names the schema declares in its top-level "properties",
// sorted; nil when it declares none. Properties declared beside a top-level
// $ref and in allOf members count too: draft 2020-12 applies them all to the
// document (see applying).
func (s *Schema) Properties() []string {
	var names []string
	for _, r := range applying(s.schema) {
		for n := range r.Properties {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// Required returns the top-level "required" names, with those beside a $ref and
// in allOf members (see applying), each once.
func (s *Schema) Required() []string {
	var names []string
	for _, r := range applying(s.schema) {
		for _, n := range r.Required {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// flatten lists the leaves of a validation error tree as violations. An
// output of a few MiB can have millions of them: a leaf costs no allocation
// beyond its Violation unless its path is escaped. bounds (nil: none) quotes
// a violated numeric bound exactly.
func flatten(ve *jsonschema.ValidationError, out *schemaViolations, bounds *boundTexts) {
	// A failed minContains (a plain "contains" is minContains 1) carries the
	// items that did not match as causes; they break nothing: the array does.
	if len(ve.Causes) > 0 && !strings.HasSuffix(ve.KeywordLocation, "/minContains") {
		for _, c := range ve.Causes {
			flatten(c, out, bounds)
		}
		return
	}
	path := instancePath(ve.InstanceLocation)
	kw := keyword(ve.KeywordLocation)
	switch kw {
	case "required":
		if names, ok := parseQuotedList(strings.TrimPrefix(ve.Message, "missing properties: ")); ok {
			for _, n := range names {
				out.add(Violation{Rule: "schema.required", Path: joinPath(path, n), Message: fmt.Sprintf("required property %q is missing", n)})
			}
			return
		}
	case "minContains":
		var least, got int
		if _, err := fmt.Sscanf(ve.Message, "valid must be >= %d, but got %d", &least, &got); err == nil {
			rule, what := "schema.minContains", fmt.Sprintf("at least %d items", least)
			if least == 1 {
				rule, what = "schema.contains", "an item" // "contains" alone asks for one
			}
			out.add(Violation{Rule: rule, Path: path, Message: fmt.Sprintf("must contain %s matching \"contains\", but %d do", what, got)})
			return
		}
	case "dependentRequired", "dependencies":
		// "property 'b' is required, if 'a' property exists": reported as
		// "required" is, at the missing property's path.
		if n, rest, ok := parseQuoted(strings.TrimPrefix(ve.Message, "property ")); ok {
			if d, _, ok := parseQuoted(strings.TrimPrefix(rest, " is required, if ")); ok {
				out.add(Violation{Rule: schemaRules[kw], Path: joinPath(path, n), Message: fmt.Sprintf("required property %q is missing (required when %q is present)", n, d)})
				return
			}
		}
	case "additionalProperties":
		msg := strings.TrimSuffix(strings.TrimPrefix(ve.Message, "additionalProperties "), " not allowed")
		if names, ok := parseQuotedList(msg); ok {
			for _, n := range names {
				// n is the document's: an input's (a caller's), as long as
				// they made it, quoted in the path and the message.
				n = rfcproblem.Clip(n)
				out.add(Violation{Rule: "schema.additionalProperties", Path: joinPath(path, n), Message: fmt.Sprintf("property %q is not allowed by the schema", n)})
			}
			return
		}
	}
	rule := "schema"
	if kw != "" {
		rule = schemaRules[kw]
	}
	out.add(Violation{Rule: rule, Path: path, Message: bounds.message(ve, kw)})
}

// instancePath converts the library's instance location (URL-escaped segments,
// "" for the root) into the path form used by every Violation.
func instancePath(loc string) string {
	if loc == "" || loc == "/" {
		return "$"
	}
	if !strings.Contains(loc, "%") {
		return loc // nothing escaped: the common case, without allocating
	}
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = u
		}
	}
	return "/" + strings.Join(segs, "/")
}

// keywords that name a failing assertion; the last segment of a keyword location
// is one of them unless the failing schema was the boolean false.
var keywords = map[string]bool{
	"type": true, "enum": true, "const": true, "format": true, "required": true,
	"minProperties": true, "maxProperties": true, "additionalProperties": true,
	"dependencies": true, "dependentRequired": true, "minItems": true, "maxItems": true,
	"uniqueItems": true, "additionalItems": true, "minContains": true, "maxContains": true,
	"minLength": true, "maxLength": true, "pattern": true, "contentEncoding": true,
	"contentMediaType": true, "contentSchema": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true, "not": true,
	"anyOf": true, "oneOf": true, "allOf": true, "then": true, "else": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "propertyNames": true,
}

// schemaRules holds the rule of each keyword: "schema.type", ...
var schemaRules = func() map[string]string {
	m := make(map[string]string, len(keywords))
	for k := range keywords {
		m[k] = "schema." + k
	}
	return m
}()

// keyword is the keyword a keyword location ends at ("/properties/a/type"
// is "type"; "/allOf/0" is "allOf", past the index; a missing
// "dependentRequired/a/0" name is "dependentRequired"); "" when the failing
// schema was `false` or its keyword is none of keywords. The location is read
// from its start, so a property named like a keyword ("/properties/type",
// refused by a false schema) is a name, not that keyword.
func keyword(kwloc string) string {
	last := ""
	rest := strings.TrimPrefix(kwloc, "/")
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		switch {
		case allDigits(seg):
			// an index (allOf/0, prefixItems/1): the keyword stays
		case namedSubschemas[seg]:
			if rest == "" {
				if keywords[seg] {
					return seg // the keyword itself failed
				}
				return ""
			}
			_, rest, _ = strings.Cut(rest, "/") // the name
			last = ""
			if seg == "dependentRequired" || seg == "dependencies" {
				var idx string
				if idx, _, _ = strings.Cut(rest, "/"); allDigits(idx) {
					return seg // the list form: a missing property
				}
			}
		default:
			last = ""
			if keywords[seg] {
				last = seg
			}
		}
	}
	return last
}

// namedSubschemas are the keywords whose next location segment is a name
// (of a property, a definition, ...), not a keyword.
var namedSubschemas = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
	"dependentSchemas": true, "dependencies": true, "dependentRequired": true,
}

// parseQuotedList parses the library's list of single-quoted names: 'a', 'b'.
func parseQuotedList(s string) ([]string, bool) {
	var names []string
	for s != "" {
		name, rest, ok := parseQuoted(s)
		if !ok {
			return nil, false
		}
		names = append(names, name)
		s = strings.TrimPrefix(rest, ", ")
	}
	return names, len(names) > 0
}

// parseQuoted parses the library's single-quoted name at the start of s
// ('a\'b') and returns it and what follows it.
func parseQuoted(s string) (name, rest string, ok bool) {
	if s == "" || s[0] != '\'' {
		return "", "", false
	}
	end := -1
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '\'' {
			end = i
			break
		}
	}
	if end < 0 {
		return "", "", false
	}
	body := strings.ReplaceAll(s[1:end], `\'`, `'`)
	body = strings.ReplaceAll(body, `"`, `\"`)
	name, err := strconv.Unquote(`"` + body + `"`)
	if err != nil {
		return "", "", false
	}
	return name, s[end+1:], true
}

func dedupe(vs []Violation) []Violation {
	out := vs[:0]
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

// applying lists s and every schema that applies to the same value with it:
// the schema its "$ref" names (whose siblings in s still apply, draft 2020-12),
// and the members of its "allOf", recursively, each once, bounded in case of a
// cycle. A value matches s only if it matches all of them. anyOf, oneOf and
// if/then/else are not followed: their branches need not apply. For load time.
func applying(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	var walk func(s *jsonschema.Schema, depth int)
	walk = func(s *jsonschema.Schema, depth int) {
		for ; s != nil && depth < 32 && len(out) < 256; depth++ {
			if slices.Contains(out, s) {
				return
			}
			out = append(out, s)
			for _, a := range s.AllOf {
				walk(a, depth+1)
			}
			s = s.Ref
		}
	}
	walk(s, 0)
	return out
}

// applyingAll is applying for several schemas that all apply to one value.
func applyingAll(ss []*jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range ss {
		for _, r := range applying(s) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// declared walks the schema along a rule path and reports a segment naming a
// property the schema does not declare, or stepping into a value the schema
// types as something else (a property of an array, an element of a string).
// At each step every schema that applies counts (see applying): a property
// declared beside a $ref or in an allOf member is declared, and so is one
// declared in a branch of an anyOf, oneOf or if/then/else (a tagged union
// declares each variant's keys in its branch, as no_extra_keys counts them;
// see throughBranches). Where the schema cannot tell (no "properties",
// pattern properties, additionalProperties true, no "type"), it accepts;
// additionalProperties given as a schema admits any key and types what is
// under it. It returns the schemas that apply where the path ends (nil when
// the schema cannot tell).
func (s *Schema) declared(segs []string) ([]*jsonschema.Schema, error) {
	budget := maxVariantWalks
	return declaredFrom(applying(s.schema), segs, "$", &budget)
}

// declaredFrom is declared from cur, the schemas that apply at at, along
// segs; budget bounds the variants followed (throughBranches).
func declaredFrom(cur []*jsonschema.Schema, segs []string, at string, budget *int) ([]*jsonschema.Schema, error) {
	for i, seg := range segs {
		if len(cur) == 0 {
			return nil, nil
		}
		idx, err := strconv.Atoi(seg)
		isIndex := err == nil && idx >= 0
		if err == nil && idx < 0 && allows(cur, "array") && !allows(cur, "object") {
			return nil, fmt.Errorf("%s is an array in the output schema and %q is not an index; use * or an index from 0", at, seg)
		}
		var next []*jsonschema.Schema
		if seg == "*" || isIndex && allows(cur, "array") {
			if !allows(cur, "array") {
				return nil, fmt.Errorf("%s is %s in the output schema, not an array; \"*\" only applies to arrays", at, typeWords(cur))
			}
			hasProps := false
			for _, r := range cur {
				if isIndex && idx < len(r.PrefixItems) {
					next = append(next, r.PrefixItems[idx])
				} else if r.Items2020 != nil {
					next = append(next, r.Items2020)
				} else if it, ok := r.Items.(*jsonschema.Schema); ok {
					next = append(next, it)
				}
				hasProps = hasProps || len(r.Properties) > 0
			}
			if len(next) == 0 && hasProps && seg == "*" {
				return nil, fmt.Errorf("%s is an object in the output schema, not an array; \"*\" only applies to arrays", at)
			}
		} else {
			if !allows(cur, "object") {
				if allows(cur, "array") {
					return nil, fmt.Errorf("%s is an array in the output schema, not an object: name its elements with * or an index (like %s)", at, joinPath(joinPath(at, "*"), seg))
				}
				return nil, fmt.Errorf("%s is %s in the output schema, so it has no property %q", at, typeWords(cur), seg)
			}
			for _, r := range cur {
				if p := r.Properties[seg]; p != nil {
					next = append(next, p)
				}
			}
			if len(next) == 0 {
				var names []string
				open := false
				for _, r := range cur {
					for n := range r.Properties {
						if !slices.Contains(names, n) {
							names = append(names, n)
						}
					}
					switch a := r.AdditionalProperties.(type) {
					case bool:
						open = open || a
					case *jsonschema.Schema:
						next = append(next, a) // applies to every undeclared key
					}
					open = open || len(r.PatternProperties) > 0
				}
				if open {
					return nil, nil
				}
				if len(next) == 0 {
					u := inBranches(cur, seg)
					switch {
					case len(u.alts) > 0 && closed(cur):
						return nil, fmt.Errorf("property %q is declared only in a branch (anyOf, oneOf, then, else, dependentSchemas) at %s, and \"additionalProperties\": false beside that branch refuses it in every output; declare it in the \"properties\" beside it", seg, at)
					case len(u.alts) > 0 && !u.open:
						return throughBranches(u.alts, segs[i+1:], joinPath(at, seg), budget)
					case u.open:
						return nil, nil
					}
					for _, n := range u.names {
						if !slices.Contains(names, n) {
							names = append(names, n)
						}
					}
				}
				if len(next) == 0 && len(names) > 0 {
					sort.Strings(names)
					return nil, fmt.Errorf("property %q is not declared in the output schema at %s (declared: %s)", seg, at, strings.Join(names, ", "))
				}
			}
		}
		if len(next) == 0 {
			return nil, nil
		}
		cur = applyingAll(next)
		at = joinPath(at, seg)
	}
	return cur, nil
}

// allows reports whether a value of one of kinds ("object", "array", "string",
// "number", "boolean", "null") can match every schema of ss (as applying lists
// them: a $ref, its siblings and allOf members all apply) as far as their "type"
// keywords tell ("integer" is a number). nil (cannot tell) allows everything.
func allows(ss []*jsonschema.Schema, kinds ...string) bool {
	for _, s := range ss {
		if len(s.Types) > 0 && !slices.ContainsFunc(s.Types, func(t string) bool {
			return slices.Contains(kinds, t) || t == "integer" && slices.Contains(kinds, "number")
		}) {
			return false
		}
	}
	return true
}

// typeWords names the types the schemas allow (the first that says), for
// messages: "a string", "a number or null".
func typeWords(ss []*jsonschema.Schema) string {
	for _, s := range ss {
		if len(s.Types) > 0 {
			words := slices.Clone(s.Types)
			switch words[0] {
			case "object", "array", "integer":
				words[0] = "an " + words[0]
			case "null":
			default:
				words[0] = "a " + words[0]
			}
			return strings.Join(words, " or ")
		}
	}
	return "a value"
}
