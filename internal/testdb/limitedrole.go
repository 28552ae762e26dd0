package testdb

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LimitedRole creates a login role that may hold at most limit connections
// at once (CONNECTION LIMIT), a member of db's user so it sees the test's
// schema, and returns a pool configuration (db's URL) connecting as it. A
// role is the cluster's, not the test's schema's: it is named uniquely and
// dropped when t ends.
func (db *DB) LimitedRole(t testing.TB, limit int) *pgxpool.Config {
	t.Helper()
	ctx := context.Background()
	var owner string
	if err := db.Pool.QueryRow(ctx, "SELECT current_user").Scan(&owner); err != nil {
		t.Fatal(err)
	}
	role := "limited_" + strings.ToLower(rand.Text()[:10])
	// A password of its own: a server that asks for one (the embedded
	// PostgreSQL, scram-sha-256) refuses a role without.
	password := rand.Text()
	if _, err := db.Pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"' CONNECTION LIMIT "+strconv.Itoa(limit)+" IN ROLE "+pgx.Identifier{owner}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User, cfg.ConnConfig.Password = role, password
	return cfg
}
