package prompt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// docs/conformance.md (Prompt content): the digest covers "the output and
// input schemas (self-contained, as compact JSON: white space in a schema file
// does not count, a file it refers to does)". A draft-07 schema that refers
// to another file cannot be inlined (inlineRefs: unsupported); when it is not
// sent to providers (response_format json_object, or the input schema) it is
// kept as is and the compiler follows the reference itself. The digest then
// covers every file reachable through "$ref", keyed by its path relative to
// the prompt directory: editing one changes the digest (a pass recorded
// against the old content stops counting), moving the prompt directory or
// white space does not.
func TestDigestCoversAReferencedFileLeftToTheCompiler(t *testing.T) {
	const manifest = `name: tickets
version: "1"
route: default
max_tokens: 200
response_format: json_object
output_schema: out.json
input_schema: in.json
messages:
  - role: system
    content: Sort the ticket. Answer in JSON.
  - role: user
    content: "{{ .text }}"
`
	base := map[string]string{
		"prompt.yaml":     manifest,
		"out.json":        `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"part": {"$ref": "part.json"}}}`,
		"part.json":       `{"type": "object", "properties": {"tag": {"$ref": "defs/tag.json#/definitions/tag"}}}`,
		"defs/tag.json":   `{"definitions": {"tag": {"type": "string"}}}`,
		"in.json":         `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"text": {"$ref": "text.json"}}}`,
		"text.json":       `{"type": "string"}`,
		"unreferenced.js": `not json, not referred to`,
	}
	digest := func(edit map[string]string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "tickets")
		for name, text := range base {
			if e, ok := edit[name]; ok {
				text = e
			}
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		set, err := prompt.LoadDir(filepath.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		p, err := set.Get("tickets", "")
		if err != nil {
			t.Fatal(err)
		}
		return p.Digest
	}
	before := digest(nil)
	if again := digest(nil); again != before {
		t.Errorf("the same prompt in another directory has digest %s, first %s: the digest depends on where the prompt directory is", again, before)
	}
	if got := digest(map[string]string{"part.json": "{\n  \"type\": \"object\",\n  \"properties\": {\"tag\": {\"$ref\": \"defs/tag.json#/definitions/tag\"}}\n}\n"}); got != before {
		t.Errorf("white space in part.json changed the digest")
	}
	for name, text := range map[string]string{
		"part.json":     `{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "tag": {"$ref": "defs/tag.json#/definitions/tag"}}}`,
		"defs/tag.json": `{"definitions": {"tag": {"type": "string", "maxLength": 8}}}`,
		"text.json":     `{"type": "string", "minLength": 1}`,
	} {
		if got := digest(map[string]string{name: text}); got == before {
			t.Errorf("digest %s unchanged after the referenced file %s changed: a pass recorded against the old schema still counts", got, name)
		}
	}
}
