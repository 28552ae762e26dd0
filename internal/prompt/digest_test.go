package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

const digestManifest = `name: tickets
version: "3"
description: Sorts tickets.
route: default
temperature: 0
max_tokens: 200
seed: 7
response_format: json_schema
output_schema: out.json
input_schema: in.json
messages:
  - role: system
    content: |
      Sort the ticket. Answer in JSON.
  - role: user
    content: "{{ .text }}"
rules:
  no_extra_keys: true
  enums:
    /kind: [a, b]
    /size: [s, m]
  ranges:
    /score: {min: 0, max: .inf}
`

const digestOutput = `{"type": "object", "required": ["kind"],
 "properties": {"kind": {"type": "string"}, "size": {"type": "string"}, "score": {"type": "number"}, "part": {"$ref": "part.json"}}}`

const digestInput = `{"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}`

const digestPart = `{"type": "string"}`

// digestOf loads one prompt written from the texts above, each changed by
// edit (file name → new text), and returns its digest.
func digestOf(t *testing.T, edit map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tickets")
	files := map[string]string{"prompt.yaml": digestManifest, "out.json": digestOutput, "in.json": digestInput, "part.json": digestPart}
	for name, text := range edit {
		files[name] = text
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatalf("edit %v: %v", edit, err)
	}
	p, err := set.Get("tickets", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Digest
}

// The content digest (recorded with conformance runs, compared by the gate)
// changes with whatever changes a request or the judgement of an answer, and
// only with that: not with how the YAML or the JSON is written, nor with the
// description, route or temperature. It is the same in every process (pinned).
func TestDigestIsTheContent(t *testing.T) {
	base := digestOf(t, nil)
	// Pinned: a replica, a restart or another Go version must compute the same
	// digest for the same prompt, or every pass would be refused. Change it
	// only with the digest's form (digestVersion).
	const pinned = "410f6256ac81e4df285621576ca4e5d9584b8cfe4d215420af047f003ab147c1"
	if base != pinned {
		t.Errorf("digest of the test prompt is %s, pinned %s: the digest changed for unchanged content", base, pinned)
	}
	manifest := func(old, new string) map[string]string {
		if !strings.Contains(digestManifest, old) {
			t.Fatalf("manifest lacks %q", old)
		}
		return map[string]string{"prompt.yaml": strings.Replace(digestManifest, old, new, 1)}
	}
	same := map[string]map[string]string{
		"description":        manifest("Sorts tickets.", "Sorts support tickets."),
		"route":              manifest("route: default", "route: other"),
		"temperature":        manifest("temperature: 0", "temperature: 0.7"),
		"key order":          manifest("max_tokens: 200\nseed: 7", "seed: 7\nmax_tokens: 200"),
		"quoting":            manifest(`content: "{{ .text }}"`, `content: '{{ .text }}'`),
		"map order":          manifest("    /kind: [a, b]\n    /size: [s, m]", "    /size: [s, m]\n    /kind: [a, b]"),
		"enum value order":   manifest("/kind: [a, b]", "/kind: [b, a]"),
		"default rule":       manifest("  no_extra_keys: true\n", ""),
		"flow style range":   manifest("{min: 0, max: .inf}", "\n      min: 0\n      max: .inf"),
		"schema white space": {"out.json": strings.ReplaceAll(digestOutput, ", ", ",\n    ")},
		"input white space":  {"in.json": " " + strings.ReplaceAll(digestInput, ": ", ":") + "\n"},
	}
	for what, edit := range same {
		if got := digestOf(t, edit); got != base {
			t.Errorf("%s changed the digest", what)
		}
	}
	changed := map[string]map[string]string{
		"system message":   manifest("Sort the ticket.", "Sort the ticket!"),
		"message spacing":  manifest("Sort the ticket. Answer", "Sort the ticket.  Answer"),
		"role":             manifest("role: system", "role: developer"),
		"model":            manifest("route: default", "route: default\nmodel: m2"),
		"max_tokens":       manifest("max_tokens: 200", "max_tokens: 201"),
		"seed":             manifest("seed: 7", "seed: 8"),
		"response format":  manifest("response_format: json_schema", "response_format: json_object"),
		"strict":           manifest("response_format: json_schema", "response_format: json_schema\nstrict: true"),
		"enum":             manifest("/kind: [a, b]", "/kind: [a, b, c]"),
		"range":            manifest("{min: 0, max: .inf}", "{min: 1, max: .inf}"),
		"no_extra_keys":    manifest("no_extra_keys: true", "no_extra_keys: false"),
		"output schema":    {"out.json": strings.Replace(digestOutput, `"required": ["kind"]`, `"required": ["kind", "size"]`, 1)},
		"referenced file":  {"part.json": `{"type": "string", "maxLength": 9}`},
		"input schema":     {"in.json": strings.Replace(digestInput, `"type": "string"`, `"type": "string", "maxLength": 9`, 1)},
		"property order":   {"out.json": strings.Replace(digestOutput, `"kind": {"type": "string"}, "size": {"type": "string"}`, `"size": {"type": "string"}, "kind": {"type": "string"}`, 1)},
		"no input schema":  manifest("input_schema: in.json\n", ""),
		"a second message": manifest(`content: "{{ .text }}"`, "content: \"{{ .text }}\"\n  - role: assistant\n    content: ok"),
	}
	for what, edit := range changed {
		if got := digestOf(t, edit); got == base {
			t.Errorf("%s kept the digest", what)
		}
	}
}
