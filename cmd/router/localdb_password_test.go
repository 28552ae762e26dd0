package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// localdb gives its command a DATABASE_URL that carries the embedded
// server's password (it asks for one), and logs that URL with the password
// hidden.
func TestLocalDBGivesItsCommandTheEmbeddedPassword(t *testing.T) {
	t.Setenv("DATABASE_URL", "") // unset: localdb starts a server of its own
	dir := t.TempDir()
	got := filepath.Join(dir, "url")
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"localdb", "--dir", filepath.Join(dir, "pg"), "--",
			"sh", "-c", `printf %s "$DATABASE_URL" > "$0"`, got})
	})
	if code != 0 {
		t.Fatalf("localdb: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	password, ok := u.User.Password()
	if !ok || len(password) < 32 {
		t.Fatalf("the command's DATABASE_URL %s carries no password", u.Redacted())
	}
	if strings.Contains(stderr, password) || !strings.Contains(stderr, "postgres:xxxxx@127.0.0.1") {
		t.Errorf("the URL is not logged with its password hidden:\n%s", stderr)
	}
}
