package contract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A pattern anchored at its start may also compile to a one-pass program,
// which gives each class instruction its own copy of the class's runes:
// "^\pL{900}$" holds about 7 MB where "\pL{900}" holds one \pL. The bound
// counted one copy, so a hundred such patterns (0.8 GB compiled, on every
// request: never cached) were within it. Found in review.
func TestRequestSchemaOnePassPatternsCountTheirCopies(t *testing.T) {
	schema := func(pattern string, n int) []byte {
		var props []string
		for i := range n {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"string","pattern":%q}`, i, pattern))
		}
		return []byte(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
	}
	var be *SchemaBoundsError
	if err := checkSchemaBounds(schema(`^\pL{900}$`, 1), "t"); !errors.As(err, &be) || !strings.Contains(err.Error(), "patterns") {
		t.Fatalf(`one "^\pL{900}$": %v; want refused by the pattern bound`, err)
	}
	if err := checkSchemaBounds(schema(`^(\pL{900})$`, 1), "t"); !errors.As(err, &be) {
		t.Fatalf(`one "^(\pL{900})$": %v; want refused by the pattern bound`, err)
	}
	// Unanchored, or too large for a one-pass program, one copy is all.
	for _, p := range []string{`\pL{900}`, `^\pL{900}x{1000}x{200}$`} {
		if err := checkSchemaBounds(schema(p, 10), "t"); err != nil {
			t.Errorf("ten of %q: %v; want accepted (no one-pass program)", p, err)
		}
	}
}
