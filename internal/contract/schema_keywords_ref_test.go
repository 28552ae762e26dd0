package contract_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// writeSchemaFiles writes files into a new directory and returns the URL of
// its schema.json, where the main schema is compiled from.
func writeSchemaFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + filepath.ToSlash(filepath.Join(dir, "schema.json"))
}

// A file of shared definitions is often a plain map of named schemas,
// referred to as "common.json#/Item": its root is no schema, and its names
// are not misspelt keywords ("Item" is not "items", "Type" not "type"). It
// was refused at load as if it were a schema with misspelt keywords.
func TestReferencedFileOfNamedDefinitionsIsNotRefused(t *testing.T) {
	common := `{"Item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
		"Type": {"enum": ["a", "b"]}, "Required": {"type": "string"}, "Schema": {"type": "integer"},
		"Then": {"$ref": "#/Else"}, "Else": {"type": "string"}, "Format": true}`
	for _, draft := range []string{"", `"$schema": "http://json-schema.org/draft-07/schema#",`} {
		url := writeSchemaFiles(t, map[string]string{"common.json": common})
		main := `{` + draft + `"type": "object", "properties": {"item": {"$ref": "common.json#/Item"}, "kind": {"$ref": "common.json#/Type"},
			"r": {"$ref": "common.json#/Required"}, "n": {"$ref": "common.json#/Schema"}, "t": {"$ref": "common.json#/Then"}, "f": {"$ref": "common.json#/Format"}}}`
		s, docs, err := contract.CompileSchemaReading([]byte(main), url)
		if err != nil {
			t.Fatalf("%sa valid schema referring to named definitions in a file was refused: %v", draft, err)
		}
		if len(docs) != 1 {
			t.Errorf("%sdocuments read: %d, want common.json", draft, len(docs))
		}
		if vs := s.Check(map[string]any{"item": map[string]any{}}); len(vs) == 0 {
			t.Errorf("%san item without its required sku passed: the definition was not used", draft)
		}
	}
}

// A misspelt keyword inside a definition the schema uses is still refused,
// naming the file and where in it the key is, whether the file is a map of
// named definitions, holds them under "$defs", or is referred to whole; and
// in a definition reached only through another file's reference.
func TestMisspeltKeywordInAReferencedDefinitionIsRefused(t *testing.T) {
	for _, tc := range []struct {
		files    map[string]string
		ref, key string
		at       string
	}{
		{map[string]string{"common.json": `{"Item": {"type": "object", "requried": ["sku"]}, "Type": {"enum": ["a"]}}`},
			"common.json#/Item", "requried", "#/Item"},
		{map[string]string{"common.json": `{"$defs": {"item": {"type": "string", "maxLenght": 3}}}`},
			"common.json#/$defs/item", "maxLenght", "#/$defs/item"},
		{map[string]string{"common.json": `{"type": "object", "additonalProperties": false}`},
			"common.json", "additonalProperties", "the schema's root"},
		{map[string]string{"common.json": `{"Item": {"$ref": "more.json#/Part"}}`, "more.json": `{"Part": {"type": "array", "item": {"type": "string"}}}`},
			"common.json#/Item", "item", "#/Part"},
		{map[string]string{"common.json": `{"a/b": {"properties": {"x": {"tpye": "string"}}}}`},
			"common.json#/a~1b", "tpye", "#/a~1b/properties/x"},
	} {
		url := writeSchemaFiles(t, tc.files)
		main := `{"type": "object", "properties": {"v": {"$ref": "` + tc.ref + `"}}}`
		_, _, err := contract.CompileSchemaReading([]byte(main), url)
		want := `"` + tc.key + `" at ` + tc.at + " is not a JSON Schema keyword"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ".json: ") {
			t.Errorf("%s: %v\nwant it to say %q", tc.ref, err, want)
		}
	}
}

// A definition the schema does not use is not walked: its names are the
// file's business until a reference reaches it.
func TestUnusedDefinitionInAReferencedFileIsNotJudged(t *testing.T) {
	url := writeSchemaFiles(t, map[string]string{"common.json": `{"Item": {"type": "string"}, "Other": {"tpye": "string"}}`})
	if _, _, err := contract.CompileSchemaReading([]byte(`{"properties": {"v": {"$ref": "common.json#/Item"}}}`), url); err != nil {
		t.Errorf("%v", err)
	}
}

// A document the compiler reads whose subschemas the schema does not use
// (a "$schema" metaschema file) is still walked: as a schema, or, when its
// root holds no keyword, as a map of named schemas.
func TestMisspeltKeywordInAMetaschemaFileIsRefused(t *testing.T) {
	meta := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "%s", "type": ["object", "boolean"], "requried": ["type"]}`
	dir := t.TempDir()
	metaURL := "file://" + filepath.ToSlash(filepath.Join(dir, "meta.json"))
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(strings.Replace(meta, "%s", metaURL, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, docs, err := contract.CompileSchemaReading([]byte(`{"$schema": "`+metaURL+`", "type": "object"}`), "file://"+filepath.ToSlash(filepath.Join(dir, "schema.json")))
	if err == nil || !strings.Contains(err.Error(), `"requried" at the schema's root is not a JSON Schema keyword`) {
		t.Errorf("%v (documents read: %d)", err, len(docs))
	}
}
