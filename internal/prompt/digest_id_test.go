package prompt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// loadTickets writes files (edit replacing some) into a fresh prompt
// directory "tickets" and loads it.
func loadTickets(t *testing.T, base, edit map[string]string) *prompt.Prompt {
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
	return p
}

const ticketsManifest = "name: tickets\nversion: \"1\"\nmax_tokens: 200\nresponse_format: json_object\noutput_schema: out.json\nmessages:\n  - role: system\n    content: Sort the ticket. Answer in JSON.\n"

// A schema with "$id" cannot have its references copied in, so the compiler
// follows them itself, resolving them against the "$id": with
// "$id": "sub/out.json", "$ref": "part.json" is sub/part.json. The digest
// resolved against the file's own path (./part.json, absent) and left
// sub/part.json out: editing it changed how answers are judged while a
// conformance pass recorded against the old schema kept counting. Found by
// review.
func TestDigestCoversAFileReachedThroughID(t *testing.T) {
	base := map[string]string{
		"prompt.yaml":   ticketsManifest,
		"out.json":      `{"$id": "sub/out.json", "type": "object", "properties": {"part": {"$ref": "part.json"}}}`,
		"sub/part.json": `{"type": "string"}`,
	}
	before := loadTickets(t, base, nil)
	after := loadTickets(t, base, map[string]string{"sub/part.json": `{"type": "integer"}`})
	_, vsBefore := before.Validator().Validate(`{"part":"x"}`)
	_, vsAfter := after.Validator().Validate(`{"part":"x"}`)
	if (len(vsBefore) == 0) == (len(vsAfter) == 0) {
		t.Fatalf("setup: editing sub/part.json did not change the judgement (%v / %v)", vsBefore, vsAfter)
	}
	if before.Digest == after.Digest {
		t.Fatalf("digest %s unchanged after sub/part.json (read through \"$id\") changed the judgement from %v to %v", before.Digest, vsBefore, vsAfter)
	}
}

// The digest covers the files the compiler reads, not every file a "$ref"
// could name: a file beside the schema that the "$id" steers the reference
// away from (./part.json), and one named only by a "$ref" inside "enum" (data,
// not a schema), are not read, and editing them leaves the digest as it was.
func TestDigestLeavesOutFilesTheCompilerDoesNotRead(t *testing.T) {
	base := map[string]string{
		"prompt.yaml":   ticketsManifest,
		"out.json":      `{"$id": "sub/out.json", "type": "object", "properties": {"part": {"$ref": "part.json"}, "kind": {"enum": [{"$ref": "data.json"}]}}}`,
		"sub/part.json": `{"type": "string"}`,
		"part.json":     `{"type": "string"}`,
		"sub/data.json": `{"type": "string"}`,
	}
	before := loadTickets(t, base, nil).Digest
	for name, text := range map[string]string{"part.json": `{"type": "integer"}`, "sub/data.json": `{"type": "integer"}`} {
		if got := loadTickets(t, base, map[string]string{name: text}).Digest; got != before {
			t.Errorf("editing %s, which the compiler does not read, changed the digest from %s to %s", name, before, got)
		}
	}
}
