package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
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

// The operator's views over a recent window (/v1/providers, the dashboard)
// read jobs and attempts through an index on created_at, not by reading the
// whole table: with 20,000 older attempts and a 5-minute window, none of
// their plans scans jobs or attempts sequentially.
func TestWindowQueriesUseIndexes(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, created_at)
		SELECT gen_random_uuid(), 'old', 'op', 'k' || g, '\x00', '1', 'r', '{}', 'failed', now() - interval '1 hour' - g * interval '1 second'
		FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `
		INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, created_at)
		SELECT gen_random_uuid(), j.id, 1, 'p' || (hashtext(j.idempotency_key) & 3), 'primary', 'failed', 1, j.created_at FROM jobs j`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `ANALYZE jobs; ANALYZE attempts`); err != nil {
		t.Fatal(err)
	}
	for name, sql := range store.WindowQueries {
		rows, err := b.db.Pool.Query(ctx, "EXPLAIN "+sql, append([]any{"5 minutes"}, store.WindowQueryArgs[name]...)...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plan := strings.Join(lines, "\n")
		for _, table := range []string{"jobs", "attempts"} {
			if strings.Contains(plan, "Seq Scan on "+table) {
				t.Errorf("%s reads all of %s for a 5-minute window:\n%s", name, table, plan)
			}
		}
		if !strings.Contains(plan, "using attempts_created") {
			t.Errorf("%s does not read attempts through attempts_created:\n%s", name, plan)
		}
	}
}
