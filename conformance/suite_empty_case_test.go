package conformance_test

import (
	"slices"
	"testing"

	"github.com/routerhq/router/conformance"
)

// A stray `-` (or ~) in a suite's cases list is refused, naming its line:
// yaml.v3 dropped it without a word, so a case meant to be there was
// silently missing from every run. Found by review.
func TestEmptyCaseIsRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"prompt: x\ncases:\n  - name: c\n    input: {}\n  -\n", "line 5: cases[1] is empty: remove the `-` line or write the entry"},
		{"prompt: x\ncases:\n  - ~\n  - name: c\n    input: {}\n", "line 3: cases[0] is empty: remove the `-` line or write the entry"},
	} {
		s, problems := conformance.ParseSuite("suite.yaml", []byte(tc.yaml))
		if s != nil || !slices.Contains(problems, tc.want) {
			t.Errorf("%s\nParseSuite = %v, %q; want %q", tc.yaml, s, problems, tc.want)
		}
	}
	// A null inside a case's input is a value, not an empty entry.
	if s, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: x\ncases:\n  - name: c\n    input: {tags: [~]}\n")); s == nil {
		t.Errorf("a null inside an input: %q", problems)
	}
}
