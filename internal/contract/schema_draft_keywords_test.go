package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

const (
	d04 = `"$schema": "http://json-schema.org/draft-04/schema#", `
	d06 = `"$schema": "http://json-schema.org/draft-06/schema#", `
	d07 = `"$schema": "http://json-schema.org/draft-07/schema#", `
	d19 = `"$schema": "https://json-schema.org/draft/2019-09/schema", `
)

// The compiler reads each keyword only in the drafts that have it, so in a
// prompt's schema a keyword of another draft checked nothing, as a misspelt
// one did: "additionalItems" in 2020-12 (a schema without "$schema"),
// "dependentRequired" or "unevaluatedProperties" in draft-07, "if" in
// draft-06, "const" in draft-04, and, before 2019-09, any keyword beside
// "$ref". It is refused at load, naming the keyword, the draft, and what to
// write instead or which "$schema" reads it.
func TestKeywordTheSchemasDraftDoesNotReadIsRefused(t *testing.T) {
	for _, tc := range []struct{ schema, key, at, draft, advice string }{
		{`{"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}], "additionalItems": false}}}`,
			"additionalItems", "#/properties/a", `draft 2020-12, the draft of a schema without "$schema"`,
			`write "items" beside "prefixItems" ("items": false ends the tuple), or set "$schema" to "https://json-schema.org/draft/2019-09/schema"`},
		{`{"$recursiveAnchor": true, "type": "object", "properties": {"kids": {"type": "array", "items": {"$recursiveRef": "#"}}}}`,
			"$recursiveAnchor", "the schema's root", "draft 2020-12", `write "$dynamicAnchor", and "$dynamicRef" for the "$recursiveRef"`},
		{`{"type": "object", "id": "out"}`, "id", "the schema's root", "draft 2020-12", `write "$id"`},
		{`{` + d19 + `"type": "array", "prefixItems": [{"type": "string"}]}`, "prefixItems", "the schema's root",
			`draft 2019-09, the draft its "$schema" selects`, `write "items" as an array, and "additionalItems" to say what may follow, or set "$schema" to "https://json-schema.org/draft/2020-12/schema"`},
		{`{` + d19 + `"$defs": {"n": {"$dynamicAnchor": "n", "type": "object", "properties": {"c": {"$dynamicRef": "#n"}}}}, "$ref": "#/$defs/n"}`,
			"$dynamicAnchor", "#/$defs/n", "draft 2019-09", `write "$recursiveAnchor": true`},
		{`{` + d07 + `"type": "object", "dependentRequired": {"amount": ["currency"]}}`, "dependentRequired", "the schema's root",
			"draft-07", `write "dependencies" with the list of names, or set "$schema" to "https://json-schema.org/draft/2019-09/schema"`},
		{`{` + d07 + `"type": "object", "dependentSchemas": {"amount": {"required": ["currency"]}}}`, "dependentSchemas", "the schema's root",
			"draft-07", `write "dependencies" with the schema`},
		{`{` + d07 + `"type": "object", "properties": {"a": {"type": "object", "unevaluatedProperties": false}}}`, "unevaluatedProperties",
			"#/properties/a", "draft-07", `write "additionalProperties" beside the "properties" it closes`},
		{`{` + d07 + `"type": "array", "contains": {"type": "string"}, "minContains": 2}`, "minContains", "the schema's root",
			"draft-07", `set "$schema" to "https://json-schema.org/draft/2019-09/schema" (draft 2019-09 and later read it)`},
		{`{` + d07 + `"definitions": {"a": {"$anchor": "a", "type": "string"}}, "type": "object", "properties": {"x": {"$ref": "#/definitions/a"}}}`,
			"$anchor", "#/definitions/a", "draft-07", `write "$id": "#name"`},
		{`{` + d07 + `"type": "object", "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 3}}, "definitions": {"s": {"type": "string"}}}`,
			"maxLength", "#/properties/a", "draft-07", `draft-07 ignores every keyword beside "$ref": put the "$ref" and "maxLength" in an "allOf" of two schemas`},
		{`{` + d07 + `"type": "array", "items": {"type": "string"}, "additionalItems": false}`, "additionalItems", "the schema's root",
			"draft-07", `it applies only beside "items" as an array`},
		{`{"type": "object", "then": {"required": ["a"]}}`, "then", "the schema's root", "draft 2020-12", `it applies only beside "if"`},
		{`{` + d06 + `"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}`, "if", "the schema's root",
			"draft-06", `write the cases as "oneOf" or "anyOf" branches, or set "$schema" to "http://json-schema.org/draft-07/schema#"`},
		{`{` + d04 + `"type": "object", "properties": {"a": {"const": 1}}}`, "const", "#/properties/a", "draft-04", `write "enum" with the one value`},
		{`{` + d04 + `"$id": "http://example.com/s", "type": "object"}`, "$id", "the schema's root", "draft-04", `write "id"`},
	} {
		_, err := contract.NewValidator([]byte(tc.schema), "out.json", contract.Rules{NoExtraKeys: ptr(false)})
		if err == nil {
			t.Errorf("%s: loaded, and %q checks nothing in its draft", tc.schema, tc.key)
			continue
		}
		for _, w := range []string{"schema out.json: ", `"` + tc.key + `" at ` + tc.at + " is not read in " + tc.draft, "so nothing would check it", tc.advice} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", tc.key, err, w)
			}
		}
	}
}

// What a draft reads loads in it, however other drafts spell it, and a
// caller's schema stays unchecked.
func TestKeywordsTheSchemasDraftReadsLoad(t *testing.T) {
	for _, schema := range []string{
		`{"type": "array", "prefixItems": [{"type": "string"}], "items": false, "minContains": 1, "contains": {"type": "string"}}`,
		`{"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}, "definitions": {"x": {"type": "string"}}, "properties": {"e": {"$ref": "#/definitions/x"}}}`,
		`{"type": "object", "properties": {"kids": {"type": "array", "items": {"$recursiveRef": "#"}}}}`,
		`{"$defs": {"n": {"$dynamicAnchor": "n", "$anchor": "m", "type": "object", "properties": {"c": {"$dynamicRef": "#n"}}}}, "$ref": "#/$defs/n", "maxProperties": 3}`,
		`{"$schema": "https://json-schema.org/schema", "type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"unevaluatedProperties": false}}`,
		`{` + d19 + `"type": "array", "items": [{"type": "string"}], "additionalItems": false, "unevaluatedItems": false, "$recursiveAnchor": true}`,
		`{` + d19 + `"type": "object", "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}, "unevaluatedProperties": false}`,
		`{` + d07 + `"type": "object", "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/definitions/s"}}, "$defs": {"s": {"type": "string"}}, "definitions": {"s": {"type": "string"}}}`,
		`{` + d07 + `"$ref": "#/definitions/main", "description": "the answer", "definitions": {"main": {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}}}`,
		`{` + d07 + `"type": "array", "items": [{"type": "string"}], "additionalItems": false, "contains": {"type": "string"}}`,
		`{` + d07 + `"$id": "http://example.com/s", "type": "object", "propertyNames": {"maxLength": 3}, "const": {"a": 1}}`,
		`{` + d07 + `"$id": "http://example.com/answer.json", "$comment": "tagged", "$ref": "#/definitions/main", "definitions": {"main": {"type": "object"}}}`,
		`{` + d04 + `"id": "http://example.com/s", "type": "object", "dependencies": {"a": ["b"]}, "properties": {"a": {"enum": [1]}}}`,
	} {
		if _, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{NoExtraKeys: ptr(false)}); err != nil {
			t.Errorf("%s: %v", schema, err)
		}
	}
	if _, err := contract.CompileRequestSchema([]byte(`{"type": "array", "prefixItems": [{"type": "string"}], "additionalItems": false}`), "request"); err != nil {
		t.Errorf("a caller's schema is not checked for keywords, as the standard has it: %v", err)
	}
}

// A file the schema refers to is read in its own draft: its "$schema", or
// 2020-12 without one, whatever the referring schema's. A "$schema" naming
// a metaschema file reads the schema in that file's draft.
func TestReferencedFileIsCheckedInItsOwnDraft(t *testing.T) {
	for _, tc := range []struct {
		name, main, file, key, draft string
	}{
		{"a draft-07 file", `{"type": "object", "properties": {"p": {"$ref": "common.json#/definitions/p"}}}`,
			`{` + d07 + `"definitions": {"p": {"type": "object", "dependentRequired": {"a": ["b"]}}}}`, "dependentRequired", "draft-07"},
		{"a file without $schema referred to by draft-07", `{` + d07 + `"type": "object", "properties": {"p": {"$ref": "common.json#/$defs/p"}}}`,
			`{"$defs": {"p": {"type": "array", "prefixItems": [{"type": "string"}], "additionalItems": false}}}`, "additionalItems", "draft 2020-12"},
	} {
		url := writeSchemaFiles(t, map[string]string{"common.json": tc.file})
		_, _, err := contract.CompileSchemaReading([]byte(tc.main), url)
		if err == nil || !strings.Contains(err.Error(), `"`+tc.key+`" at #/`) || !strings.Contains(err.Error(), "not read in "+tc.draft) ||
			!strings.Contains(err.Error(), "common.json") {
			t.Errorf("%s: %v\nwant %q refused as not read in %s, naming common.json", tc.name, err, tc.key, tc.draft)
		}
	}

	url := writeSchemaFiles(t, map[string]string{"meta.json": `{` + d07 + `"type": "object"}`})
	meta := strings.TrimSuffix(url, "schema.json") + "meta.json"
	main := `{"$schema": "` + meta + `", "type": "object", "properties": {"a": {"prefixItems": [{"type": "integer"}]}}}`
	_, _, err := contract.CompileSchemaReading([]byte(main), url)
	if err == nil || !strings.Contains(err.Error(), `"prefixItems" at #/properties/a is not read in draft-07, the draft its "$schema" selects`) {
		t.Errorf("a schema whose metaschema file is draft-07: %v\nwant prefixItems refused as not read in draft-07", err)
	}
}

// no_extra_keys counts as declared only the keys of branches the schema's
// draft reads: in a caller's draft-07 schema (not checked for keywords) a
// "dependentSchemas" branch, or in draft-06 an "if"/"then", declares nothing,
// since the compiler ignores it, and a key only it names is an extra key.
func TestNoExtraKeysIgnoresBranchesTheDraftDoesNotRead(t *testing.T) {
	for name, schema := range map[string]string{
		"dependentSchemas in draft-07": `{` + d07 + `"type":"object","properties":{"kind":{"type":"string"},"refund":{"type":"boolean"}},
			"dependentSchemas":{"refund":{"properties":{"refund_amount":{"type":"number"}}}}}`,
		"then in draft-06": `{` + d06 + `"type":"object","properties":{"kind":{"type":"string"},"refund":{"type":"boolean"}},
			"if":{"required":["refund"]},"then":{"properties":{"refund_amount":{"type":"number"}}}}`,
		"beside $ref in draft-07": `{` + d07 + `"type":"object","properties":{"kind":{"type":"string"},"refund":{"type":"boolean"}},
			"anyOf":[{"$ref":"#/definitions/r","properties":{"refund_amount":{"type":"number"}}}],"definitions":{"r":{"type":"object"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			val, err := contract.NewRequestValidator([]byte(schema), "request", contract.Rules{})
			if err != nil {
				t.Fatal(err)
			}
			checkCase(t, val, `{"kind":"billing","refund":true,"refund_amount":12.5}`, []v{{"no_extra_keys", "/refund_amount"}}, `key "refund_amount" is not declared`)
		})
	}
}
