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
)

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent use.
type Schema struct {
	url    string
	schema *jsonschema.Schema
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
// (a "date" must be a date), unlike the 2020-12 default.
//
// A schema that arrives with a request must be compiled with
// CompileRequestSchema instead, which loads nothing.
func CompileSchema(schemaJSON []byte, url string) (*Schema, error) {
	if url == "" {
		url = "mem:///schema.json"
	}
	return compile(schemaJSON, url, url, nil)
}

// CompileRequestSchema compiles a JSON Schema supplied by a caller (for example
// a chat completion's response_format.json_schema). Nothing is loaded from
// outside the document: a "$ref" (or "$schema") that names another document
// fails with ErrExternalRef. name says where the schema came from, in errors.
func CompileRequestSchema(schemaJSON []byte, name string) (*Schema, error) {
	deny := func(string) (io.ReadCloser, error) { return nil, errExternalLoad }
	s, err := compile(schemaJSON, requestSchemaURL, name, deny)
	if errors.Is(err, errExternalLoad) {
		return nil, fmt.Errorf("schema %s: %w", name, ErrExternalRef)
	}
	return s, err
}

// errExternalLoad is what the request loader answers; it never leaves the package.
var errExternalLoad = errors.New("external load refused")

func compile(schemaJSON []byte, url, name string, load func(string) (io.ReadCloser, error)) (*Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = load // nil: the library's loaders (files), for trusted schemas only
	if err := c.AddResource(url, bytes.NewReader(schemaJSON)); err != nil {
		return nil, fmt.Errorf("schema %s is not valid JSON: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		if errors.Is(err, errExternalLoad) {
			return nil, errExternalLoad
		}
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			var lines []string
			for _, v := range flatten(ve, nil) {
				lines = append(lines, fmt.Sprintf("at %s: %s", v.Path, v.Message))
			}
			return nil, fmt.Errorf("schema %s is not a valid JSON Schema: %s", name, strings.Join(lines, "; "))
		}
		return nil, fmt.Errorf("schema %s does not compile: %w", name, err)
	}
	return &Schema{url: name, schema: s}, nil
}

// URL is the name the schema was compiled under.
func (s *Schema) URL() string { return s.url }

// Check validates a decoded document (numbers as json.Number, see ParseJSON) and
// returns every leaf failure, sorted by path. Rules are "schema.<keyword>".
func (s *Schema) Check(doc any) []Violation {
	err := s.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Rule: "schema", Path: "$", Message: err.Error()}}
	}
	vs := flatten(ve, nil)
	sortViolations(vs)
	return dedupe(vs)
}

// Properties returns the names the schema declares in its top-level "properties"
// (following a top-level $ref), sorted; nil when it declares none.
func (s *Schema) Properties() []string {
	root := deref(s.schema)
	if root == nil || len(root.Properties) == 0 {
		return nil
	}
	names := make([]string, 0, len(root.Properties))
	for n := range root.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Required returns the top-level "required" names (following a top-level $ref).
func (s *Schema) Required() []string {
	root := deref(s.schema)
	if root == nil {
		return nil
	}
	return append([]string(nil), root.Required...)
}

// flatten lists the leaves of a validation error tree as violations.
func flatten(ve *jsonschema.ValidationError, out []Violation) []Violation {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			out = flatten(c, out)
		}
		return out
	}
	path := instancePath(ve.InstanceLocation)
	kw := keyword(ve.KeywordLocation)
	switch kw {
	case "required":
		if names, ok := parseQuotedList(strings.TrimPrefix(ve.Message, "missing properties: ")); ok {
			for _, n := range names {
				out = append(out, Violation{Rule: "schema.required", Path: joinPath(path, n), Message: fmt.Sprintf("required property %q is missing", n)})
			}
			return out
		}
	case "additionalProperties":
		msg := strings.TrimSuffix(strings.TrimPrefix(ve.Message, "additionalProperties "), " not allowed")
		if names, ok := parseQuotedList(msg); ok {
			for _, n := range names {
				out = append(out, Violation{Rule: "schema.additionalProperties", Path: joinPath(path, n), Message: fmt.Sprintf("property %q is not allowed by the schema", n)})
			}
			return out
		}
	}
	rule := "schema"
	if kw != "" {
		rule += "." + kw
	}
	return append(out, Violation{Rule: rule, Path: path, Message: ve.Message})
}

// instancePath converts the library's instance location (URL-escaped segments,
// "" for the root) into the path form used by every Violation.
func instancePath(loc string) string {
	if loc == "" || loc == "/" {
		return "$"
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

func keyword(kwloc string) string {
	segs := strings.Split(kwloc, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if keywords[segs[i]] {
			return segs[i]
		}
		if _, err := strconv.Atoi(segs[i]); err != nil {
			break // a property name: the failing schema was `false`
		}
	}
	return ""
}

// parseQuotedList parses the library's list of single-quoted names: 'a', 'b'.
func parseQuotedList(s string) ([]string, bool) {
	var names []string
	for s != "" {
		if s[0] != '\'' {
			return nil, false
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
			return nil, false
		}
		body := strings.ReplaceAll(s[1:end], `\'`, `'`)
		body = strings.ReplaceAll(body, `"`, `\"`)
		name, err := strconv.Unquote(`"` + body + `"`)
		if err != nil {
			return nil, false
		}
		names = append(names, name)
		s = strings.TrimPrefix(s[end+1:], ", ")
	}
	return names, len(names) > 0
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

// deref follows $ref chains (bounded, in case of a cycle).
func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && s.Ref != nil && i < 32; i++ {
		s = s.Ref
	}
	return s
}

// declared walks the schema along a rule path and reports a segment naming a
// property the schema does not declare, or stepping into a value the schema
// types as something else (a property of an array, an element of a string).
// Where the schema cannot tell (no "properties", pattern or additional
// properties, no "type", combinators), it accepts. It returns the schema the
// path ends at (nil when the schema cannot tell).
func (s *Schema) declared(segs []string) (*jsonschema.Schema, error) {
	cur := s.schema
	at := "$"
	for _, seg := range segs {
		if deref(cur) == nil {
			return nil, nil
		}
		idx, err := strconv.Atoi(seg)
		isIndex := err == nil && idx >= 0
		if err == nil && idx < 0 && allows(cur, "array") && !allows(cur, "object") {
			return nil, fmt.Errorf("%s is an array in the output schema and %q is not an index; use * or an index from 0", at, seg)
		}
		var next *jsonschema.Schema
		if seg == "*" || isIndex && allows(cur, "array") {
			if !allows(cur, "array") {
				return nil, fmt.Errorf("%s is %s in the output schema, not an array; \"*\" only applies to arrays", at, typeWords(cur))
			}
			r := deref(cur)
			if isIndex && idx < len(r.PrefixItems) {
				next = r.PrefixItems[idx]
			} else if r.Items2020 != nil {
				next = r.Items2020
			} else if it, ok := r.Items.(*jsonschema.Schema); ok {
				next = it
			} else if len(r.Properties) > 0 && seg == "*" {
				return nil, fmt.Errorf("%s is an object in the output schema, not an array; \"*\" only applies to arrays", at)
			}
		} else {
			if !allows(cur, "object") {
				if allows(cur, "array") {
					return nil, fmt.Errorf("%s is an array in the output schema, not an object: name its elements with * or an index (like %s)", at, joinPath(joinPath(at, "*"), seg))
				}
				return nil, fmt.Errorf("%s is %s in the output schema, so it has no property %q", at, typeWords(cur), seg)
			}
			r := deref(cur)
			next = r.Properties[seg]
			if next == nil && len(r.Properties) > 0 && len(r.PatternProperties) == 0 {
				if _, open := r.AdditionalProperties.(*jsonschema.Schema); !open {
					names := make([]string, 0, len(r.Properties))
					for n := range r.Properties {
						names = append(names, n)
					}
					sort.Strings(names)
					return nil, fmt.Errorf("property %q is not declared in the output schema at %s (declared: %s)", seg, at, strings.Join(names, ", "))
				}
			}
		}
		if next == nil {
			return nil, nil
		}
		cur = next
		at = joinPath(at, seg)
	}
	return cur, nil
}

// allows reports whether a value of one of kinds ("object", "array", "string",
// "number", "boolean", "null") can match s as far as the "type" keywords along
// its $ref chain tell ("integer" is a number). Every level must allow it: a
// $ref and its siblings all apply.
func allows(s *jsonschema.Schema, kinds ...string) bool {
	for i := 0; s != nil && i < 32; i++ {
		if len(s.Types) > 0 && !slices.ContainsFunc(s.Types, func(t string) bool {
			return slices.Contains(kinds, t) || t == "integer" && slices.Contains(kinds, "number")
		}) {
			return false
		}
		s = s.Ref
	}
	return true
}

// typeWords names the types a schema allows, for messages: "a string",
// "a number or null".
func typeWords(s *jsonschema.Schema) string {
	for i := 0; s != nil && i < 32; i++ {
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
		s = s.Ref
	}
	return "a value"
}
