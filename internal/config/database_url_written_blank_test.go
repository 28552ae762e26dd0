package config

import (
	"strings"
	"testing"
)

// database_url written with a blank value — `""`, white space, or nothing
// after the colon (a template variable that did not render, a secret file
// that was empty) — was read as left out: `router serve` then started on the
// embedded development database in the container, apart from every other
// replica, with only a warning. The same blank in DATABASE_URL is refused
// (TestBlankDatabaseURLIsRefused) for exactly that reason, and prompts_dir
// written blank is refused too (TestBlankPromptsDirRefused). A file that
// writes the key blank is refused the same way, naming its line. Found by
// review (rcli10).
func TestWrittenBlankDatabaseURLRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, written := range []string{`database_url: ""`, `database_url: "  "`, `database_url: "\n"`, `database_url:`, `database_url: ~`} {
		c, err := Parse([]byte(defaultsBase + written + "\n"))
		if err == nil {
			t.Errorf("%q: Parse accepted it (DatabaseURL %q: serve would start the embedded development database); want it refused as written but blank", written, c.DatabaseURL)
			continue
		}
		if !strings.Contains(err.Error(), "database_url") {
			t.Errorf("%q: Parse error %q does not name database_url", written, err)
		}
	}
	// Left out, it is still SPEC §11's default (the embedded database, warned about).
	if c, err := Parse([]byte(defaultsBase)); err != nil || c.DatabaseURL != "" {
		t.Fatalf("left out: Parse = %+v, %v; want the default (empty)", c, err)
	}
}

// The refusal names the line and says what to write instead.
func TestWrittenBlankDatabaseURLMessage(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte("database_url: \"\"\n" + defaultsBase))
	want := "line 1: database_url is written but blank: give the PostgreSQL URL (or set DATABASE_URL), write `embedded` for the embedded development database, " +
		"or leave the key out for that default (a blank value is usually a template variable that did not render)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Parse = %v; want %q", err, want)
	}
}

// DATABASE_URL replaces the file's database_url, so a blank key left in the
// file of a deployment that sets DATABASE_URL still loads, on DATABASE_URL.
// A DATABASE_URL of white space replaces nothing: both are reported.
func TestWrittenBlankDatabaseURLOverridden(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://env/db")
	c, err := Parse([]byte(defaultsBase + "database_url: \"\"\n"))
	if err != nil || c.DatabaseURL != "postgres://env/db" {
		t.Fatalf("DATABASE_URL set: Parse = %+v, %v; want DATABASE_URL used", c, err)
	}
	t.Setenv("DATABASE_URL", " ")
	_, err = Parse([]byte(defaultsBase + "database_url: \"\"\n"))
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is set but empty") || !strings.Contains(err.Error(), "database_url is written but blank") {
		t.Fatalf("DATABASE_URL blank too: Parse = %v; want both refused", err)
	}
}
