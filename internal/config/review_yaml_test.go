package config

import (
	"strings"
	"testing"
)

// A tab in the indentation is a YAML syntax error whose own words ("found
// character that cannot start any token") do not say what is wrong; the
// message now names the line and the tab.
func TestTabIndentationIsNamed(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte("http:\n  max_wait: 5s\nlog:\n\tlevel: debug\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4 is indented with a tab: YAML indents with spaces only") {
		t.Fatalf("tab indentation: %v", err)
	}
	// A tab after the value (before a comment) is fine YAML.
	if _, err := Parse([]byte("http:\n  max_wait: 5s\t# a comment\n")); err != nil {
		t.Fatal(err)
	}
}

// A key written twice is refused, never "last one wins". yaml.v3 refused it
// too, but then decoded nothing of the mapping holding it: a repeated
// top-level key hid every other problem of the file, and only the first
// duplicate was named. Now every duplicate is named, with the rest.
func TestEveryDuplicateKeyReportedWithTheOtherProblems(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
listen: 127.0.0.1:1
listen: 127.0.0.1:2
listne: 3
providers:
  - {name: p, type: scripted, timeout: 10s, timeout: 20s, breaker: {open_for: -1s}}
routes:
  r: {providers: [p]}
  r: {providers: [p], max_attempts: 9}
  s: {providers: [ghost]}
`, "line 3: listen is written twice (first at line 2)", "listne is not a known setting",
		"line 6: providers[0].timeout is written twice (first at line 6)", "line 9: routes.r is written twice (first at line 8)",
		"providers[0] (p).breaker.open_for (-1s) must be a positive duration", `routes.s.providers: "ghost" is not a configured provider`)
	// A duplicate inside an anchored mapping is named once.
	_, err := Parse([]byte("providers:\n  - &a {name: p, type: scripted, name: q}\n  - {<<: *a}\n"))
	if err == nil || strings.Count(err.Error(), "written twice") != 1 {
		t.Fatalf("a duplicate in an anchor: %v", err)
	}
}

// Guard (passes without a change here): a UTF-8 byte order mark is read past.
func TestBOMIsReadPast(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte("\ufefflisten: 127.0.0.1:1\n"))
	if err != nil || c.Listen != "127.0.0.1:1" {
		t.Fatalf("a file starting with a BOM: %v", err)
	}
}
