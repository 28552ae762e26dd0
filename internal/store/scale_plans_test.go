package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// Every foreign key of the router's tables has an index that leads with its
// columns. Deleting or re-keying a referenced row makes PostgreSQL look for
// rows that still reference it, once per row; without such an index each look
// reads the whole referencing table. Retention deletes a batch's attempts,
// and race_events.attempt_id had none: a batch of 100 jobs (118 attempts)
// spent 2.6-3.8 s in 118 reads of all race events, with 53,000 of them
// (migration 0019). River's own tables are River's.
func TestForeignKeysAreIndexed(t *testing.T) {
	b := setup(t)
	rows, err := b.db.Pool.Query(context.Background(), `
		SELECT c.conrelid::regclass::text, c.conname
		FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
		WHERE c.contype = 'f' AND r.relnamespace = current_schema()::regnamespace
		  AND r.relname NOT LIKE 'river\_%'
		  AND NOT EXISTS (
		      SELECT 1 FROM pg_index i
		      WHERE i.indrelid = c.conrelid AND i.indpred IS NULL
		        AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
		        AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var table, name string
		err := r.Scan(&table, &name)
		return table + "." + name, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("foreign key %s has no index leading with its columns: every delete of a referenced row reads the whole table", m)
	}
}

// Recovery's orphan scan (ClaimOrphans, every pass of the leader) reads the
// open jobs only, however many finished jobs retention keeps. The open jobs
// are all at the newest end of the table; a plan that walked jobs by
// creation from the oldest, filtering on state, read every finished job
// first (503,330 rows, 0.85-1.9 s a pass with a month of jobs; migration
// 0019). The plan checked is the one the store ran, with its actual row
// counts (auto_explain, reported to this test's connection).
func TestOrphanScanReadsOnlyOpenJobs(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := b.db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// 10,000 finished jobs over the last month, each with its attempt (with
	// the finished jobs' attempts absent, the planner reads the open jobs
	// whatever the indexes), 200 running jobs with live leases and an attempt
	// in flight, and 3 orphans: running, lease expired, nothing in flight.
	exec(`INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input,
			state, completed_by, result, created_at, updated_at, finished_at)
		SELECT gen_random_uuid(), 'old', 'triage', 'k' || g, '\x00', '1', 'default', '{}', 'succeeded',
			gen_random_uuid(), '{}', now() - interval '30 days' + g * interval '240 seconds',
			now() - interval '30 days' + g * interval '240 seconds', now() - interval '30 days' + g * interval '240 seconds'
		FROM generate_series(1, 10000) g`)
	exec(`INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input,
			state, lease_owner, lease_expires_at, created_at)
		SELECT gen_random_uuid(), 'live', 'triage', 'l' || g, '\x00', '1', 'default', '{}', 'running',
			CASE WHEN g <= 3 THEN 'dead' ELSE 'r1' END,
			now() + CASE WHEN g <= 3 THEN interval '-5 seconds' ELSE interval '1 hour' END,
			now() - g * interval '100 milliseconds'
		FROM generate_series(1, 203) g`)
	exec(`INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, lease_owner, lease_expires_at)
		SELECT gen_random_uuid(), id, 1, 'p', 'primary', 'running', 1, 'r1', now() + interval '1 hour'
		FROM jobs WHERE owner = 'live' AND lease_owner = 'r1'`)
	exec(`INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, created_at, finished_at)
		SELECT completed_by, id, 1, 'p', 'primary', 'won', 1, created_at, created_at FROM jobs WHERE owner = 'old'`)
	exec(`ANALYZE jobs`)
	exec(`ANALYZE attempts`)

	pool, plans := explainingPool(t, b)

	ids, err := store.New(pool, store.Options{KeyRetention: time.Hour}).ClaimOrphans(ctx, "r2", 30*time.Second, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("claimed %d orphans, want the 3", len(ids))
	}
	found := false
	for _, p := range plans("SKIP LOCKED") {
		if !strings.Contains(p.Query, "ORDER BY j.created_at") {
			continue
		}
		found = true
		// The open jobs are 203; reading each of them twice would still be
		// bounded. What grows with the table is reading the finished ones.
		if read := p.Plan.rowsRead("jobs"); read > 2*203 {
			t.Errorf("the orphan scan read %.0f rows of jobs to find 3 orphans among 203 open jobs (10,000 finished): its cost grows with the table\n%s", read, p.JSON)
		}
	}
	if !found {
		t.Fatal("no plan of the orphan scan was reported")
	}
}
