package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// lazyCommitSQL, queued first in a batch sent without BEGIN (the delivery
// reads' claims), turns synchronous_commit off for the batch's statements —
// one transaction, before one Sync — and for no later statement on the
// connection: the claims' commit does not wait for the WAL flush, and the
// next user of the connection gets durable commits again.
func TestLazyCommitLastsItsBatchOnly(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The test cluster runs with synchronous_commit off (it is not
	// durable); a production database's default is on.
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET synchronous_commit`)
	const before = "on"
	batch := &pgx.Batch{}
	batch.Queue(store.LazyCommitSQL)
	batch.Queue(`SHOW synchronous_commit`)
	br := conn.SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	var in string
	if err := br.QueryRow().Scan(&in); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	var after string
	if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if in != "off" || after != before {
		t.Fatalf("synchronous_commit in the batch %q (want off), after it %q (want %q)", in, after, before)
	}
}
