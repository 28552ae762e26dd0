package prompt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// A schema whose "$schema" names a metaschema file makes the compiler read
// that file, whose own "$schema" decides the draft the schema is judged by:
// in 2020-12 an element "contains" matched counts as evaluated, so
// "unevaluatedItems": false passes it; in 2019-09 it does not.
// The schema refers to no other file, so nothing was covered: editing the
// metaschema changed the judgement and left the digest as it was.
func TestDigestCoversACustomMetaschemaFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "tickets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := "file://" + filepath.ToSlash(filepath.Join(dir, "meta.json"))
	load := func(metaDraft string) *prompt.Prompt {
		t.Helper()
		for name, text := range map[string]string{
			"prompt.yaml": ticketsManifest,
			"out.json":    `{"$schema": "` + meta + `", "type": "object", "properties": {"a": {"contains": {"type": "integer"}, "unevaluatedItems": false}}}`,
			"meta.json":   `{"$schema": "` + metaDraft + `"}`,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		set, err := prompt.LoadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		p, err := set.Get("tickets", "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := load("https://json-schema.org/draft/2019-09/schema")
	after := load("https://json-schema.org/draft/2020-12/schema")
	_, vsBefore := before.Validator().Validate(`{"a":[1]}`)
	_, vsAfter := after.Validator().Validate(`{"a":[1]}`)
	if (len(vsBefore) == 0) == (len(vsAfter) == 0) {
		t.Fatalf("setup: editing meta.json did not change the judgement (%v / %v)", vsBefore, vsAfter)
	}
	if before.Digest == after.Digest {
		t.Fatalf("digest %s unchanged after meta.json (the \"$schema\") changed the judgement from %v to %v", before.Digest, vsBefore, vsAfter)
	}
}
