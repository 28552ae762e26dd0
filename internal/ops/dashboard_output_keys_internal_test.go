package ops

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// The dashboard "never shows inputs or results" (docs/operations.md), and
// attemptWhy shows "the first contract rule the output broke and where"
// without any value of the output. But a violation's path can be built from
// the output's own keys (no_extra_keys: "/<the key>", and schema violations'
// instance locations): an output object keyed by tenant data put that data,
// of any length, on every operator's page. Found by review.
func TestAttemptWhyShowsNoOutputKeys(t *testing.T) {
	ps, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	secret := "Jane Doe SSN 078-05-1120 " + strings.Repeat("x", 5000)
	out := `{"category":"technical","priority":"high","summary":"Customer cannot log in.","needs_human":false,` +
		`"` + secret + `":true}`
	_, vs := p.Validator().Validate(out)
	if len(vs) == 0 {
		t.Fatal("the output with an undeclared key is valid; the test needs a prompt that refuses extra keys")
	}
	raw, _ := json.Marshal(vs)
	a := &store.Attempt{State: store.AttemptInvalid, ValidationErrors: raw}
	for _, why := range []string{attemptWhy(a), attemptWhyIn(a, outputNames{"category": true})} {
		if strings.Contains(why, "Jane Doe") || len(why) > maxWhy {
			t.Errorf("the dashboard's reason quotes the output (%d bytes): %.120q…", len(why), why)
		}
		if !strings.HasPrefix(why, "output breaks the contract: "+vs[0].Rule) {
			t.Errorf("the reason %.120q does not name the rule %s", why, vs[0].Rule)
		}
	}
}

// A path keeps its array indexes and the names the prompt declares; any
// other segment, which can only come from the output, is "*". The contract
// rules' own paths (rules.yaml's pointers) are kept whole.
func TestShownPath(t *testing.T) {
	names := outputNames{"line_items": true, "amount": true, "a/b": true}
	for _, c := range []struct{ rule, path, want string }{
		{"no_extra_keys", "/Jane Doe", "/*"},
		{"schema.additionalProperties", "/line_items/2/jane@example.com", "/line_items/2/*"},
		{"schema.type", "/line_items/12/amount", "/line_items/12/amount"},
		{"schema.type", "/Jane/amount", "/*/amount"},
		{"json.duplicate_key", "/a~1b", "/a~1b"},
		{"json.duplicate_key", "/4111111111111111", "/*"},
		{"json.duplicate_key", "/007", "/*"},
		{"custom:due_date", "/Jane", "/*"},
		{"json.syntax", "$", "$"},
		{"enum", "/category", "/category"},
		{"product", "/line_items/3/total", "/line_items/3/total"},
		{"schema.type", "Jane", ""},
	} {
		if got := shownPath(c.rule, c.path, names); got != c.want {
			t.Errorf("%s at %s: shown as %q, want %q", c.rule, c.path, got, c.want)
		}
	}
	if got := shownPath("schema.type", "/line_items/0", nil); got != "/*/0" {
		t.Errorf("without the prompt's names: %q, want /*/0", got)
	}
}

// The names a prompt declares are those under "properties" and "required"
// at any depth, not the output's.
func TestOutputNamesOfAPrompt(t *testing.T) {
	ps, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{prompts: ps}
	seen := map[string]outputNames{}
	p, _ := ps.Get("triage", "")
	names := s.outputNames(&store.Job{Operation: "triage", PromptVersion: p.Version}, seen)
	for _, n := range []string{"category", "priority", "summary", "needs_human"} {
		if !names[n] {
			t.Errorf("triage's output schema declares %q; names: %v", n, names)
		}
	}
	if names["type"] || names["string"] {
		t.Errorf("names hold schema keywords or values: %v", names)
	}
	if got := s.outputNames(&store.Job{Operation: "triage", PromptVersion: "no-such-version"}, seen); got != nil {
		t.Errorf("a version not loaded: %v, want none", got)
	}
	if got := s.outputNames(&store.Job{Operation: "chat:default"}, seen); got != nil {
		t.Errorf("a job without a prompt version (chat): %v, want none", got)
	}
}

// What the page says about one attempt is capped, on a character boundary,
// and keeps its count of further violations.
func TestAttemptWhyIsCapped(t *testing.T) {
	long := strings.Repeat("é", 300)
	vs, _ := json.Marshal([]map[string]string{{"rule": "custom:" + long, "path": "$"}, {"rule": "enum", "path": "/x"}})
	kind, _ := json.Marshal(map[string]any{"kind": long, "status": 500})
	for _, a := range []store.Attempt{
		{State: store.AttemptInvalid, ValidationErrors: vs},
		{State: store.AttemptFailed, Error: kind},
	} {
		why := attemptWhy(&a)
		if len(why) > maxWhy || !utf8.ValidString(why) || !strings.Contains(why, "…") {
			t.Errorf("%s: %d bytes, valid UTF-8 %v: %q", a.State, len(why), utf8.ValidString(why), why)
		}
		if a.State == store.AttemptInvalid && !strings.HasSuffix(why, " (+1 more)") {
			t.Errorf("the cut reason lost its count: %q", why)
		}
	}
}
