package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// releaseKey makes owner's job under key, cancels it, expires its key and
// lets a job of another request take the key over: released_keys then holds
// the first job. It returns the first job's id and fingerprint.
func releaseKey(t *testing.T, b *bundle, owner, key string) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	old, _, err := b.st.CreateJob(ctx, newJob(t, owner, "triage", key, `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, owner, old.ID); err != nil {
		t.Fatal(err)
	}
	var fp []byte
	if err := b.db.Pool.QueryRow(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE job_id = $1 RETURNING fingerprint`, old.ID).Scan(&fp); err != nil {
		t.Fatal(err)
	}
	if _, created, err := b.st.CreateJob(ctx, newJob(t, owner, "triage", key, `{"n":2}`)); err != nil || !created {
		t.Fatalf("claim of the expired key: created=%v err=%v; want a new job", created, err)
	}
	return old.ID, fp
}

// The 409 idempotency-key-reused names the caller's earlier job from
// released_keys by the key it held (migration 0033): the takeover's trigger
// records the key, the rows of before the migration are filled from their
// jobs, and the lookup finds the job either way, and only its owner's.
func TestReleasedKeyJobFoundByItsKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	lookup := func(where, owner, key, want string, fp []byte) {
		t.Helper()
		got, err := b.st.ReleasedKeyJobOf(ctx, owner, "triage", key, fp)
		switch {
		case want == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: ReleasedKeyJobOf(%s, %s) = %+v, %v; want ErrNotFound", where, owner, key, got, err)
		case want != "" && (err != nil || got.JobID != want):
			t.Errorf("%s: ReleasedKeyJobOf(%s, %s) = %+v, %v; want job %s, whose key was taken over", where, owner, key, got, err, want)
		}
	}

	old, fp := releaseKey(t, b, "acme", "rk-new")
	if n := count(t, b, `SELECT count(*) FROM released_keys WHERE job_id = $1
		AND owner = 'acme' AND operation = 'triage' AND idempotency_key = 'rk-new'`, old); n != 1 {
		t.Errorf("the takeover's trigger wrote %d released_keys row(s) with the job's owner, operation and key; want 1", n)
	}
	lookup("trigger", "acme", "rk-new", old, fp)
	lookup("trigger, another owner", "globex", "rk-new", "", fp)
	lookup("trigger, another key", "acme", "rk-other", "", fp)

	// The schema before 0033: no key in released_keys, the trigger's
	// function of 0006 (pinned as 0029 did).
	before, fpBefore := releaseKey(t, b, "acme", "rk-old")
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM schema_migrations WHERE version = 33;
		ALTER TABLE released_keys DROP COLUMN owner, DROP COLUMN operation, DROP COLUMN idempotency_key;
		CREATE OR REPLACE FUNCTION idempotency_key_released() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
		    INSERT INTO released_keys (job_id, expired_at) VALUES (OLD.job_id, coalesce(OLD.expires_at, now()))
		    ON CONFLICT (job_id) DO NOTHING;
		    RETURN NULL;
		END
		$$`); err != nil {
		t.Fatal(err)
	}
	applied, err := b.st.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !slices.Contains(applied, "0033_released_keys_by_key.sql") {
		t.Fatalf("migrate applied %v; want 0033 among them", applied)
	}
	if n := count(t, b, `SELECT count(*) FROM released_keys WHERE owner IS NULL OR operation IS NULL OR idempotency_key IS NULL`); n != 0 {
		t.Errorf("after 0033, %d released_keys row(s) of before have no key; want them filled from their jobs", n)
	}
	lookup("backfill", "acme", "rk-old", before, fpBefore)
	lookup("backfill", "acme", "rk-new", old, fp)
	if n := count(t, b, `SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass('released_keys_key') AND indisvalid`); n != 1 {
		t.Error("after 0033, released_keys_key is missing or invalid")
	}

	// The replaced function still records takeovers, with their key.
	after, fpAfter := releaseKey(t, b, "acme", "rk-after")
	lookup("trigger after 0033", "acme", "rk-after", after, fpAfter)
}
