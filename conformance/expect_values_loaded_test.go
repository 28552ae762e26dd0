package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Expectation values are judged against the output schema the prompt
// compiled when it was loaded, the one its replies are judged by, not a
// second compilation that reads the schema's files again: a file the schema
// refers to that changed (or went) since the load changes no judgement.
func TestExpectationValuesAreJudgedByTheLoadedSchema(t *testing.T) {
	p := writePrompt(t, `{"type": "object", "properties": {"status": {"$ref": "status.json"}}}`, "",
		map[string]string{"status.json": `{"type": "string", "enum": ["open", "closed"]}`})
	status := filepath.Join(filepath.Dir(p.OutputSchemaFile), "status.json")
	if err := os.WriteFile(status, []byte(`{"type": "integer"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const input = "{x: go}"
	if err := checkExpect(t, p, input, "equal: {/status: open}"); err != nil {
		t.Errorf("a value the loaded schema allows is refused after its file changed: %v", err)
	}
	want := `output schema at /status: value must be one of "open", "closed"`
	if err := checkExpect(t, p, input, "equal: {/status: opne}"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("after the schema's file changed: Check = %v\nwant it to say %q", err, want)
	}
	if err := os.Remove(status); err != nil {
		t.Fatal(err)
	}
	if err := checkExpect(t, p, input, "equal: {/status: opne}"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("after the schema's file was removed: Check = %v\nwant it to say %q", err, want)
	}
}
