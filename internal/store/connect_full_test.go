package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A server with no connection slot for the router (53300: max_connections,
// or the role's CONNECTION LIMIT) is not sent to check database_url, which
// is right: it is told what to raise or lower.
func TestConnectToAFullServerSaysWhatToRaise(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	role := "full_" + strings.ToLower(db.Schema)
	// With a password: a server that asks for one (the embedded PostgreSQL)
	// refuses a role without it before it looks at the limit.
	if _, err := db.Pool.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'full' CONNECTION LIMIT 0`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Pool.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "full")
	pool, err := store.Connect(ctx, u.String())
	if err == nil {
		pool.Close()
		t.Fatal("connected as a role with CONNECTION LIMIT 0")
	}
	if !strings.Contains(err.Error(), "53300") {
		t.Fatalf("set-up: not a 53300: %v", err)
	}
	for _, w := range []string{"no room for another connection", "max_connections", "CONNECTION LIMIT", "pool_max_conns"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "check database_url") || strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a full server is sent to check the URL or the network: %q", err)
	}
}
