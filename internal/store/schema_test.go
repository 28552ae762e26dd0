package store_test

import (
	"context"
	"testing"
)

// No table of the router's carries a STORED generated column: PostgreSQL 15
// re-reads and re-plans such a column's expression at the start of every
// INSERT and UPDATE statement on its table, whatever the statement changes —
// attempts' cost_usd did that for 5% of the database's CPU under load until
// migration 0011 made it a function of the row (still read as a.cost_usd).
func TestTablesHaveNoGeneratedColumns(t *testing.T) {
	b := setup(t)
	rows, err := b.db.Pool.Query(context.Background(), `
		SELECT c.relname || '.' || a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = current_schema()::regnamespace AND a.attgenerated <> '' AND NOT a.attisdropped`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s is a generated column: it makes every INSERT and UPDATE of its table plan its expression again; compute it when read (a function of the row, as attempts' cost_usd)", col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
