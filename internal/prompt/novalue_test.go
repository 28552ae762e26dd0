package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A caller's text may itself say "<no value>" (a support ticket about a page
// that shows it). JSON encoders such as Go's encoding/json escape '<' and '>'
// (\u003c, \u003e), so the raw input does not contain the literal text even
// though the decoded value does: the render must not be refused for it.
func TestRender_NoValueTextFromEscapedInput(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	body := "Since the update the profile page shows <no value> where my name should be."
	raw, err := json.Marshal(map[string]string{"subject": "Name missing", "body": body})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "<no value>") {
		t.Fatalf("encoding/json no longer escapes '<': %s", raw)
	}
	msgs, err := p.Render(raw)
	if err != nil {
		t.Fatalf("Render(%s): %v", raw, err)
	}
	if !strings.Contains(msgs[1].Content, body) {
		t.Fatalf("user message %q lacks the body", msgs[1].Content)
	}
	m, err := p.ParseInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.RenderParsed(m, raw); err != nil {
		t.Fatalf("RenderParsed(%s): %v", raw, err)
	}
}
