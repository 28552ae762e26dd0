package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
)

// A retention pass goes past the expired jobs another transaction holds (an
// operator's UPDATE of old jobs' attempts, left open in psql) at a bounded
// cost per batch: the pass reaches and deletes the one free job behind them
// with about held/batch batches, each reading about batch expiry entries.
// Before, each batch walked from the oldest entry again and left out the
// held jobs found so far by id: batch k read k batches' worth of entries and
// compared each with every id left out, a pass grew as the cube of the held
// jobs (20,000 held: 2 minutes to delete one job), and once a batch outlasted
// the batch timeout no pass ever reached the jobs behind them.
func TestRetentionPassGoesPastHeldJobsAtABoundedCost(t *testing.T) {
	const held, batch = 5000, 100
	b := setup(t)
	ctx := context.Background()
	b.exec(t, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, completed_by, result, created_at, updated_at)
		SELECT md5('j'||i)::uuid, 'plain', 'op', 'held-'||i, '\x00', '', 'default', '{}', 'succeeded', md5('a'||i)::uuid, '{}',
		       now() - $2::interval - interval '1 hour', now() - $2::interval
		FROM generate_series(1, $1::int) i`, held, retention+10*time.Hour)
	b.exec(t, `INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint, expires_at)
		SELECT 'plain', 'op', 'held-'||i, md5('j'||i)::uuid, '\x00', now() - $2::interval + i * interval '1 second'
		FROM generate_series(1, $1::int) i`, held, retention+10*time.Hour)
	b.exec(t, `INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version)
		SELECT md5('a'||i)::uuid, md5('j'||i)::uuid, 1, 'p', 'primary', 'won', 1 FROM generate_series(1, $1::int) i`, held)
	b.exec(t, `ANALYZE`)
	free := b.settled(t, "free") // its key expired after every held job's
	b.expiredAgo(t, free.ID, retention+time.Hour)

	holder, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck
	if tag, err := holder.Exec(ctx, `UPDATE attempts SET state = state WHERE job_id <> $1`, free.ID); err != nil || tag.RowsAffected() != held {
		t.Fatalf("hold the old jobs' attempts: %v (%d rows, want %d)", err, tag.RowsAffected(), held)
	}

	pool, plans := explainingPool(t, b)
	c := &maintenance.Cleaner{Store: store.New(pool, store.Options{KeyRetention: time.Hour}), After: retention, Batch: batch}
	guard, cancel := context.WithTimeout(ctx, 2*time.Minute) // a hang guard, not a timing assertion
	defer cancel()
	plans("")
	if n, err := c.Once(guard); err != nil || n != 1 {
		t.Fatalf("one pass behind %d held jobs: deleted %d (err %v); want the free job", held, n, err)
	}
	if b.exists(t, free.ID) {
		t.Fatal("the free job behind the held ones is still there")
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key LIKE 'held-%'`); n != held {
		t.Fatalf("%d of the %d held jobs left; want all", n, held)
	}
	walks := plans("FOR UPDATE OF j SKIP LOCKED")
	if len(walks) == 0 || len(walks) > held/batch+2 {
		t.Fatalf("the pass chose its batches with %d statements; want at most %d (held/batch, the free job's, one more)", len(walks), held/batch+2)
	}
	for i, p := range walks {
		// Reading each place's entry twice would still be bounded; what
		// grows with the pass is reading the entries of the held jobs
		// earlier batches passed over.
		if read := p.Plan.rowsRead("idempotency_keys") + p.Plan.rowsRead("released_keys"); read > 2*batch {
			t.Fatalf("batch %d of %d read %.0f expiry entries for %d places: its cost grows with the held jobs passed over\n%s",
				i+1, len(walks), read, batch, p.JSON)
		}
	}
}
