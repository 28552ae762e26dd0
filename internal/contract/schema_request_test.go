package contract

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A caller's schema loads nothing: a $ref to an existing file, a missing file,
// a relative path, an http URL or a custom $schema all fail with the one
// ErrExternalRef message, which never quotes what the target holds.
func TestCompileRequestSchema_RefusesExternalReferences(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string","description":"TOPSECRET"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer web.Close()
	cases := map[string]string{
		"existing file":     `{"$ref":"file://` + secret + `"}`,
		"missing file":      `{"$ref":"file://` + filepath.Join(dir, "missing.json") + `"}`,
		"etc hostname":      `{"type":"object","properties":{"a":{"$ref":"file:///etc/hostname"}}}`,
		"relative path":     `{"$ref":"secret.json"}`,
		"id as file base":   `{"$id":"file://` + dir + `/","$ref":"secret.json"}`,
		"http":              `{"$ref":"` + web.URL + `/schema.json"}`,
		"custom $schema":    `{"$schema":"` + web.URL + `/meta.json","type":"object"}`,
		"defs pointing out": `{"$defs":{"x":{"$ref":"file:///etc/passwd#/a"}},"$ref":"#/$defs/x"}`,
	}
	var first string
	for name, schema := range cases {
		_, err := CompileRequestSchema([]byte(schema), "response_format.json_schema")
		if !errors.Is(err, ErrExternalRef) {
			t.Errorf("%s: err = %v, want ErrExternalRef", name, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "TOPSECRET") || strings.Contains(msg, "no such file") || strings.Contains(msg, dir) {
			t.Errorf("%s: message leaks the target: %s", name, msg)
		}
		if first == "" {
			first = msg
		} else if msg != first {
			t.Errorf("%s: message %q differs from %q: an oracle", name, msg, first)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the web server was asked %d times; want 0", n)
	}
}

// References inside the document still work: fragments and $defs, and an
// $id-named subschema the document defines.
func TestCompileRequestSchema_InternalReferences(t *testing.T) {
	schema := `{"$defs":{"name":{"type":"string","minLength":1},
		"other":{"$id":"https://example.com/other.json","type":"integer"}},
		"type":"object","properties":{"a":{"$ref":"#/$defs/name"},"b":{"$ref":"https://example.com/other.json"}},
		"required":["a","b"]}`
	s, err := CompileRequestSchema([]byte(schema), "response_format.json_schema")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseJSON([]byte(`{"a":"","b":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	vs := s.Check(doc)
	if len(vs) != 2 {
		t.Fatalf("violations = %v, want minLength at /a and type at /b", vs)
	}
}

// A trusted schema (a prompt's file) still resolves refs to files beside it.
func TestCompileSchema_TrustedFileRefs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "item.json"), []byte(`{"type":"integer"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.json")
	if _, err := CompileSchema([]byte(`{"$ref":"item.json"}`), main); err != nil {
		t.Fatalf("trusted schema with a file ref: %v", err)
	}
}
