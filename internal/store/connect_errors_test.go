package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Connect's error says what to check: a server that answered and refused the
// database or the login is not "unreachable" (that sends the operator to the
// network), and a refused connection names the setting to check.
func TestConnectErrorsSayWhatToCheck(t *testing.T) {
	db := testdb.New(t, store.Options{})
	noDB, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	noDB.Path = "/no_such_database"
	noRole, _ := url.Parse(db.URL)
	noRole.User = url.User("no_such_role")
	closed := testdb.ClosedAddr(t) // a port nothing listens on
	for _, c := range []struct {
		name, url string
		want      []string
		unreach   bool
	}{
		{"no such database", noDB.String(), []string{"has no such database", "database name in database_url (DATABASE_URL)"}, false},
		{"no such role", noRole.String(), []string{"refused the login", "user and password in database_url (DATABASE_URL)"}, false},
		{"nothing listening", "postgres://postgres@" + closed + "/router?sslmode=disable", []string{"database unreachable at " + closed, "PostgreSQL runs there", "database_url (DATABASE_URL)"}, true},
	} {
		pool, err := store.Connect(context.Background(), c.url)
		if err == nil {
			pool.Close()
			t.Errorf("%s: connected", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
		if !c.unreach && strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s: %q says unreachable, though the server answered", c.name, err)
		}
	}
}
