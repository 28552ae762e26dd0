package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// loadWithSchemaRC3 loads a one-prompt directory whose output schema is
// schema and returns the load error's text.
func loadWithSchemaRC3(t *testing.T, schema string) string {
	t.Helper()
	dir := t.TempDir()
	pd := filepath.Join(dir, "p")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := "name: p\nversion: \"1\"\nmax_tokens: 10\noutput_schema: out.json\nmessages:\n  - role: user\n    content: hi {{ .x }}\n"
	if err := os.WriteFile(filepath.Join(pd, "prompt.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pd, "out.json"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := prompt.LoadDir(dir)
	if err == nil {
		t.Fatalf("%s loaded; want a load error", schema)
	}
	return err.Error()
}

// A "$ref" to a location its own file does not have is reported with the
// missing target only ("...out.json#/$defs/missing not found"), not where
// the reference is: in a schema of many references the author must search
// for it. The inliner's error for the same mistake across files names the
// reference ("$ref": "common.json#/..."); this one names neither the
// reference's location nor says it is a "$ref".
func TestMissingLocalRefLocated(t *testing.T) {
	msg := loadWithSchemaRC3(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}},"$defs":{"b":{}}}`)
	if !strings.Contains(msg, "/properties/a") {
		t.Errorf("load error %q does not say where the broken \"$ref\" is (/properties/a)", msg)
	}
}

// A misspelt type ("strin") is reported with two problems, the second of
// which is false advice from the meta-schema's anyOf: "expected array, but
// got string" (a type may be a list, but the mistake is the spelling).
func TestMisspeltTypeAdvice(t *testing.T) {
	msg := loadWithSchemaRC3(t, `{"type":"object","properties":{"a":{"type":"strin"}}}`)
	if strings.Contains(msg, "expected array") {
		t.Errorf("load error %q tells the author the type must be an array", msg)
	}
}
