package config

import (
	"strings"
	"testing"
)

// The tab hint named the first line with a tab in its leading white space,
// whatever the syntax error: a tab that is block-scalar text (a scripted
// output holding tab-indented JSON) was blamed for an unclosed brace two
// lines later. Found by review.
func TestTabHintIgnoresTabsInsideBlockScalars(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	y := "providers:\n" +
		"  - name: s\n" +
		"    type: scripted\n" +
		"    script:\n" +
		"      - output: |\n" +
		"          {\"a\": 1,\n" +
		"          \t\"b\": 2}\n" + // line 7: a tab in the text, after the block's indentation
		"routes:\n" +
		"  r: {providers: [s]\n" // line 9: the real error, an unclosed brace
	if _, err := Parse([]byte(y[:strings.Index(y, "routes:")] + "routes:\n  r: {providers: [s]}\n")); err != nil {
		t.Fatalf("the file without the syntax error is valid YAML, yet: %v", err)
	}
	_, err := Parse([]byte(y))
	if err == nil {
		t.Fatal("unclosed brace accepted")
	}
	if strings.Contains(err.Error(), "indented with a tab") {
		t.Fatalf("the hint blames line 7, whose tab is block-scalar text, for a syntax error elsewhere: %v", err)
	}
}

// A tab that is the error is still named, in each of yaml.v3's words for it,
// even after a tab that is valid text.
func TestTabHintNamesTheTabOfTheError(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for y, want := range map[string]string{
		"log:\n\tlevel: debug\n":                        "line 2 is indented with a tab",
		"a: |\n  x\n  \ty\nlog:\n\tlevel: debug\n":      "line 5 is indented with a tab",
		"log:\n  level: debug\n\t  format: text\n":      "line 3 is indented with a tab", // yaml.v3 says line 2
		"log:\n  level: debug\n  format: |\n  x\n\ty\n": "line 5 is indented with a tab",
	} {
		if _, err := Parse([]byte(y)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", y, err, want)
		}
	}
	if _, err := Parse([]byte("a: @x\n\tb: 1\n")); err == nil || strings.Contains(err.Error(), "tab") {
		t.Errorf("an @ that cannot start a token is not a tab: %v", err)
	}
}
