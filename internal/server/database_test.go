package server

import (
	"strings"
	"testing"
)

// SPEC §11: with no database_url (and no DATABASE_URL) the router uses the
// embedded local database — said with a warning, since a production replica
// on a private database keeps its jobs and keys apart from the others';
// `database_url: embedded` chooses it explicitly, and a URL is a URL.
func TestEmbeddedDatabaseChoice(t *testing.T) {
	for url, want := range map[string][2]bool{
		"":                             {true, false},
		"embedded":                     {true, true},
		"postgres://db.example:5432/r": {false, false},
	} {
		if e, x := embeddedDatabase(url); e != want[0] || x != want[1] {
			t.Errorf("database_url %q: embedded %v explicit %v, want %v %v", url, e, x, want[0], want[1])
		}
	}
	for _, s := range []string{"DATABASE_URL", "every replica shares", "database_url: embedded"} {
		if !strings.Contains(noDatabaseWarning, s) {
			t.Errorf("the warning does not say %q: %s", s, noDatabaseWarning)
		}
	}
}
