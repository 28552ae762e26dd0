package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// Issue 11: arrays of the store's ids (Go strings) go to uuid[] parameters in
// binary and still mean the same ids; an array holding a string that is not a
// UUID is still refused by the database with its usual error. (A pool
// of store.Connect; testdb's pools are configured alike.)
func TestStringIDsAreSentAsBinaryUUIDs(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	pool, err := store.Connect(ctx, b.db.URL, func(c *pgxpool.Config) { c.MinConns, c.MaxConns = 0, 1 })
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	m := conn.Conn().TypeMap()
	const id = "6f1c2f0e-6d7a-4b8e-9d3c-1a2b3c4d5e6f"
	other := "00000000-0000-4000-8000-000000000001"
	for name, c := range map[string]struct {
		oid uint32
		v   any
	}{
		"uuid from string":        {pgtype.UUIDOID, id},
		"uuid[] from []string":    {pgtype.UUIDArrayOID, []string{id, other}},
		"uuid[] from []*string":   {pgtype.UUIDArrayOID, []*string{&other, nil}},
		"uuid from *string (nil)": {pgtype.UUIDOID, (*string)(nil)},
	} {
		if _, err := m.Encode(c.oid, pgtype.BinaryFormatCode, c.v, nil); err != nil {
			t.Errorf("%s: no binary encoding: %v", name, err)
		}
	}

	var one string
	var many []*string
	if err := conn.QueryRow(ctx, `SELECT $1::uuid::text, $2::uuid[]::text[]`, id, []*string{&other, nil}).Scan(&one, &many); err != nil {
		t.Fatal(err)
	}
	if one != id || len(many) != 2 || many[0] == nil || *many[0] != other || many[1] != nil {
		t.Fatalf("round trip: %q %v, want %q and [%q NULL]", one, many, id, other)
	}
	var pgErr *pgconn.PgError
	if err := conn.QueryRow(ctx, `SELECT $1::uuid[]::text`, []string{id, "not-a-uuid"}).Scan(&one); !errors.As(err, &pgErr) || pgErr.Code != "22P02" {
		t.Fatalf("a malformed id: %v, want PostgreSQL's invalid text representation (22P02)", err)
	}
}
