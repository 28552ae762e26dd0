package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/routerhq/router/internal/contract"
)

// schemaFile is one schema file a manifest names, read and compiled.
type schemaFile struct {
	path string
	raw  []byte // the file's bytes, without a UTF-8 byte-order mark
	doc  *jnode // raw, parsed
	// compact is the self-contained schema as compact JSON (references to
	// other files copied in, see inlineRefs): what providers are sent, and
	// what schema was compiled from.
	compact []byte
	// refs are the files compact refers to when the compiler follows the
	// references itself (they could not be copied in): the digest covers them.
	refs   []refFile
	schema *contract.Schema
}

// loadSchemaFile reads the schema file rel (field names it in the manifest),
// checks its JSON (problems name line and column), makes it self-contained
// and compiles it. sent says providers receive it (the output schema under
// response_format json_schema): a reference that cannot be copied in is then
// a problem; otherwise the compiler follows it itself, as it always did.
func loadSchemaFile(dir, rel, field string, sent bool, report func(string, string, ...any)) (*schemaFile, bool) {
	b, path, ok := readSchema(dir, rel, field, report)
	if !ok {
		return nil, false
	}
	f := &schemaFile{path: path, raw: trimBOM(b)}
	doc, err := parseSchemaJSON(f.raw)
	if err != nil {
		if de := (*duplicateKeyError)(nil); errors.As(err, &de) {
			report(field, "schema %s: %v", path, err)
		} else {
			report(field, "schema %s is not valid JSON: %v", path, err)
		}
		return nil, false
	}
	f.doc = doc
	out, origins, changed, err := inlineRefs(path, doc)
	if err != nil {
		var ie *inlineError
		switch {
		case !errors.As(err, &ie) || !ie.unsupported:
			report(field, "%v", err)
			return nil, false
		case sent:
			report(field, "%v; providers asked for json_schema output receive this schema's text and cannot follow a reference to another document (OpenAI and vLLM answer 400): "+
				"copy what it refers to into the \"$defs\" of %s and refer to it as \"#/$defs/<name>\", or set response_format: json_object", err, filepath.Base(path))
			return nil, false
		}
		changed = false // only the router reads it: its compiler follows the reference itself
	}
	var buf bytes.Buffer
	if !changed {
		_ = json.Compact(&buf, f.raw) // parsed above, so it is JSON
		f.compact = buf.Bytes()
		var docs []contract.Document
		if f.schema, docs, err = contract.CompileSchemaReading(f.raw, path); err != nil {
			report(field, "%v", err)
			return nil, false
		}
		// The compiler may have read other files (a reference it follows
		// itself, through "$id" or not): the digest covers them.
		if f.refs, err = referencedFiles(dir, path, docs); err != nil {
			report(field, "%v", err)
			return nil, false
		}
		return f, true
	}
	if err := out.marshal(&buf); err != nil {
		report(field, "schema %s: %v", path, err)
		return nil, false
	}
	f.compact = buf.Bytes()
	// Compiled so that it loads nothing, so a reference left pointing
	// outside would fail here rather than at a provider; still the prompt's
	// own schema (formats checked, cost not bounded).
	if f.schema, err = contract.CompileSelfContainedSchema(f.compact, path); err != nil {
		report(field, "%v (in the schema with the files it refers to copied in: %s)", err, strings.Join(origins, "; "))
		return nil, false
	}
	return f, true
}

// readSchema reads a schema file named relative to the manifest's directory.
func readSchema(dir, rel, field string, report func(string, string, ...any)) ([]byte, string, bool) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		report(field, "%q must be a relative path inside %s", rel, dir)
		return nil, "", false
	}
	path := filepath.Join(dir, rel)
	b, err := os.ReadFile(path)
	if err != nil {
		report(field, "%v", err)
		return nil, "", false
	}
	return b, path, true
}

// closedProperties returns the names a schema document allows at its top
// level when it allows no others, and how it closes them (for the load
// error): its "properties" when it says "additionalProperties": false and has
// no "patternProperties", or the properties "unevaluatedProperties": false
// sees (unevaluatedClosed). ok is false for an open schema (any name may be
// sent), and for one whose closure the check cannot follow.
func closedProperties(doc *jnode) (names []string, how string, ok bool) {
	ap := doc.get("additionalProperties")
	if ap == nil || ap.kind != 's' || ap.scalar != false || doc.get("patternProperties") != nil {
		if names, ok := unevaluatedClosed(doc); ok {
			return names, `"unevaluatedProperties": false and declared in no "properties" it sees`, true
		}
		return nil, "", false
	}
	if props := doc.get("properties"); props != nil && props.kind == 'o' {
		names = append(names, props.keys...)
	}
	return names, `"additionalProperties": false and not in "properties"`, true
}
