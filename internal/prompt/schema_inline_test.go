package prompt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
)

// externalRefs returns every "$ref" of a schema text that is not a fragment of
// the schema itself.
func externalRefs(t *testing.T, schema []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		t.Fatalf("provider schema is not JSON: %v\n%s", err, schema)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); k == "$ref" && ok && !strings.HasPrefix(s, "#") {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// judged lists rule@path of a schema's verdict on doc.
func judged(t *testing.T, s *contract.Schema, doc string) []string {
	t.Helper()
	v, err := contract.ParseJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vi := range s.Check(v) {
		out = append(out, vi.Rule+"@"+vi.Path)
	}
	return out
}

// The schema sent to providers under json_schema must be self-contained: a
// "$ref" to a file beside it (which the router's compiler loads itself) is
// copied into "$defs". OpenAI structured outputs and vLLM answer 400 to a
// reference they cannot follow, and that answer is never retried.
func TestProviderSchema_FileRefsInlined(t *testing.T) {
	files := map[string]string{
		// A pointer into another file, a whole file, a name that collides with
		// one of the root's own definitions, a recursive reference, and a
		// reference back into the root.
		"out.json": `{"type":"object",
			"properties":{
				"item":{"$ref":"common.json#/$defs/item"},
				"money":{"$ref":"defs/money.json"},
				"tree":{"$ref":"common.json#/$defs/node"},
				"own":{"$ref":"#/$defs/item"}
			},
			"required":["item","money"],
			"additionalProperties":false,
			"$defs":{"item":{"type":"string","maxLength":3},"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`,
		// Nested references inside the referenced file: to its own $defs
		// (#/...), and to a third file in a subdirectory.
		"common.json": `{"$defs":{
				"item":{"type":"object","properties":{"n":{"$ref":"#/$defs/count"},"price":{"$ref":"defs/money.json"}},"required":["n"]},
				"count":{"type":"integer","minimum":1},
				"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}},"code":{"$ref":"out.json#/$defs/code"}}}}}`,
		"defs/money.json": `{"type":"object","properties":{"amount":{"type":"number"},"currency":{"$ref":"../out.json#/$defs/code"}},"required":["amount","currency"]}`,
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p", "defs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePrompt(t, dir, "p", manifestWith(""), files)
	set, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	sent := p.ProviderResponseFormat().Schema
	if refs := externalRefs(t, sent); len(refs) > 0 {
		t.Fatalf("the schema sent to providers still refers to other documents %v:\n%s", refs, sent)
	}
	if strings.Contains(string(sent), "\n") {
		t.Fatalf("not compact:\n%s", sent)
	}
	// Property order is the file's (providers generate keys in that order).
	if i, j := strings.Index(string(sent), `"item"`), strings.Index(string(sent), `"money"`); i < 0 || j < i {
		t.Fatalf("property order changed:\n%s", sent)
	}
	// The root's own "item" definition is kept; the copy gets another name.
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(sent, &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc.Defs["item"]) != `{"type":"string","maxLength":3}` {
		t.Fatalf("the root's own $defs/item was replaced: %s", doc.Defs["item"])
	}

	// The self-contained schema judges like the original, which the
	// compiler resolves by loading the files.
	original, err := contract.CompileSchema([]byte(files["out.json"]), filepath.Join(dir, "p", "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	provider, err := contract.CompileRequestSchema(sent, "provider schema")
	if err != nil {
		t.Fatalf("the provider schema does not compile on its own: %v", err)
	}
	samples := []string{
		`{"item":{"n":2},"money":{"amount":1,"currency":"EUR"}}`,
		`{"item":{"n":0,"price":{"amount":"x","currency":"eur"}},"money":{"amount":1}}`,
		`{"item":{},"money":{"currency":"EURO"},"own":"abcd","extra":1}`,
		`{"item":{"n":1},"money":{"amount":1,"currency":"USD"},"tree":{"children":[{"children":[{"code":"usd"}]}],"code":"GBP"}}`,
		`{"item":{"n":1.5},"money":{"amount":1,"currency":"USD"},"tree":{"children":[{"children":"no"}]}}`,
		`{"item":"x","money":[]}`,
		`[]`,
	}
	failures := 0
	for _, s := range samples {
		want := judged(t, original, s)
		failures += len(want)
		if got := judged(t, provider, s); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the schema sent to providers judges %v, the original %v", s, got, want)
		}
		_, vs := p.Validator().Validate(s) // no rules apply: only the schema stage judges
		var got []string
		for _, v := range vs {
			got = append(got, v.Rule+"@"+v.Path)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the router's validator judges %v, the original %v", s, got, want)
		}
	}
	if failures < 10 {
		t.Fatalf("the samples exercise too little: %d violations in all", failures)
	}
}

// A schema without references to other files is sent as it is written,
// compacted (the shipped examples).
func TestProviderSchema_NoFileRefsUnchanged(t *testing.T) {
	for _, name := range []string{"triage", "invoice"} {
		p, _ := loadExamples(t).Get(name, "")
		b, err := os.ReadFile(p.OutputSchemaFile)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			t.Fatal(err)
		}
		if got := string(p.ProviderResponseFormat().Schema); got != want.String() {
			t.Fatalf("%s: provider schema\n%s\nwant the file compacted\n%s", name, got, want.String())
		}
	}
}

// What cannot be copied faithfully into the schema providers receive is a
// load error under json_schema, naming the file and the reference; under
// json_object the router alone reads the schema, and its compiler follows the
// reference as before.
func TestProviderSchema_UncopyableRefs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"anchor fragment", map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"$ref":"common.json#item"}}}`,
			"common.json": `{"$defs":{"item":{"$anchor":"item","type":"string"}}}`,
		}, `out.json: "$ref": "common.json#item": the fragment "item" is an anchor`},
		{"$id in the referenced file", map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"$ref":"common.json"}}}`,
			"common.json": `{"$id":"common.json","type":"string"}`,
		}, `common.json: "$id" cannot be used in a document referred to from another schema file`},
		{"other draft", map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"$ref":"common.json#/definitions/a"}}}`,
			"common.json": `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"string"}}}`,
		}, `common.json: its draft (http://json-schema.org/draft-07/schema#) is not the one of out.json (2020-12)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, file, err := loadOne(t, manifestWith(""), tc.files)
			if err == nil || !strings.Contains(err.Error(), file+": output_schema: ") || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "set response_format: json_object") {
				t.Fatalf("want a load error with %q, got %v", tc.want, err)
			}
			set, _, err := loadOne(t, manifestWith("response_format: json_object\n"), tc.files)
			if err != nil {
				t.Fatalf("json_object: the router's compiler follows the reference, so it loads: %v", err)
			}
			p, _ := set.Get("p", "")
			if _, vs := p.Validator().Validate(`{"a":1}`); len(vs) != 1 || vs[0].Rule != "schema.type" {
				t.Fatalf("json_object: the reference is not followed: %v", vs)
			}
		})
	}
}

// A reference to a file or location that does not exist is a load error
// naming both, whatever the response format.
func TestProviderSchema_MissingTargets(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"no file": {map[string]string{"out.json": `{"properties":{"a":{"$ref":"commn.json"}}}`}, `out.json: "$ref": "commn.json": open `},
		"no location": {map[string]string{"out.json": `{"properties":{"a":{"$ref":"common.json#/$defs/itm"}}}`, "common.json": `{"$defs":{"item":{}}}`},
			`"$ref": "common.json#/$defs/itm": common.json has nothing at the JSON pointer "/$defs/itm"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := loadOne(t, manifestWith(""), tc.files)
			var le *prompt.LoadError
			if !errors.As(err, &le) || len(le.Problems) != 1 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want one problem with %q, got %v", tc.want, err)
			}
		})
	}
}
