package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A DATABASE_URL that is set but only white space (" ", a stray newline from
// a secret file) is refused, naming the file: read as unset it put serve on
// the embedded development database, apart from the other replicas. Found
// by review.
func TestBlankDatabaseURLIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte("database_url: postgres://file/db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{" ", "\n", " \t\r\n"} {
		t.Setenv("DATABASE_URL", v)
		c, err := Load(path)
		want := "DATABASE_URL is set but empty or only white space: unset it to use database_url from " + path + ", or set it to the PostgreSQL URL"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("DATABASE_URL=%q: Load = %+v, %v; want %q", v, c, err, want)
		}
	}
}

// An empty DATABASE_URL ("") is read as unset, as before: the file's
// database_url applies.
func TestEmptyDatabaseURLKeepsFile(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte("database_url: postgres://file/db\n"))
	if err != nil || c.DatabaseURL != "postgres://file/db" {
		t.Fatalf("Parse = %+v, %v; want the file's database_url", c, err)
	}
	t.Setenv("DATABASE_URL", "  postgres://env/db\n") // white space around a URL is trimmed, as before
	if c, err = Parse([]byte("database_url: postgres://file/db\n")); err != nil || c.DatabaseURL != "postgres://env/db" {
		t.Fatalf("Parse = %+v, %v; want DATABASE_URL trimmed", c, err)
	}
}
