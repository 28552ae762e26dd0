-- The key a released job held, kept in released_keys, and an index to find a
-- key's released jobs.
--
-- A 409 idempotency-key-reused names the caller's earlier job that held the
-- key until it expired and a newer job took it over
-- (store.ReleasedKeyJobOf). released_keys had only job_id and expired_at, and
-- jobs has no index on its key: the lookup read all of the owner's jobs, or
-- every released key of every owner, to find one (most often none). Any
-- tenant gets that 409 at will by resending a key with another body, so each
-- such request could make the shared database read a whole history.
--
-- released_keys now holds the owner, operation and idempotency key of the
-- row that was taken over, written by the trigger that already fires on a
-- takeover only (OLD is the idempotency_keys row, which holds them), and an
-- index on them leads the lookup to the key's own released jobs, each then
-- joined to jobs by id for its fingerprint.
--
-- The columns are nullable without a default: adding them rewrites nothing,
-- and a row written without them (by hand) is only one the lookup does not
-- find. The rows of before are filled from their jobs; a row whose job is
-- gone (a job retention deleted, which deletes its row too) keeps NULLs.
--
-- Locks. ALTER TABLE holds an exclusive lock on released_keys until this
-- migration's transaction commits, so it is made only when a column is
-- missing (a catalog check first); meanwhile a key's takeover, whose trigger
-- writes released_keys, waits, and so does the claim that takes the key over.
-- The backfill updates each row of released_keys once (one row per key taken
-- over within retention), and the index build reads it, blocking takeovers
-- (not reads of jobs) until the commit. The replaced function takes no table
-- lock. With a large released_keys, add the columns and build the index
-- first without blocking reads or writes:
--   ALTER TABLE released_keys ADD COLUMN IF NOT EXISTS owner text,
--       ADD COLUMN IF NOT EXISTS operation text, ADD COLUMN IF NOT EXISTS idempotency_key text;
--   CREATE INDEX CONCURRENTLY released_keys_key ON released_keys (owner, operation, idempotency_key, expired_at DESC);
-- and this migration then only fills the rows and replaces the function. An
-- index such a build left INVALID is dropped and built again here, as 0025
-- does.
--
-- A replica of the previous version writes released_keys only through this
-- trigger, so its takeovers fill the columns too once this migration has
-- committed, and its lookup (by jobs' columns) still works: a rolling update
-- is safe. A takeover already inside the trigger's previous version when
-- this migration commits may write its row without the columns: that job is
-- then not named by a 409 (the 409 is the same otherwise).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_attribute
            WHERE attrelid = 'released_keys'::regclass AND attname = 'idempotency_key' AND NOT attisdropped) THEN
        ALTER TABLE released_keys ADD COLUMN IF NOT EXISTS owner text,
            ADD COLUMN IF NOT EXISTS operation text, ADD COLUMN IF NOT EXISTS idempotency_key text;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION idempotency_key_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO released_keys (job_id, expired_at, owner, operation, idempotency_key)
    VALUES (OLD.job_id, coalesce(OLD.expires_at, now()), OLD.owner, OLD.operation, OLD.idempotency_key)
    ON CONFLICT (job_id) DO NOTHING;
    RETURN NULL;
END
$$;

UPDATE released_keys r SET owner = j.owner, operation = j.operation, idempotency_key = j.idempotency_key
FROM jobs j WHERE j.id = r.job_id AND r.idempotency_key IS NULL;

-- CREATE OR REPLACE FUNCTION dropped the function's search_path (migration
-- 0029): pinned again.
DO $$
DECLARE
    s text := current_schema();
BEGIN
    IF s IS NULL THEN
        RAISE EXCEPTION 'the search_path names no existing schema, so the router''s schema is unknown: set search_path=<the router''s schema> in database_url';
    END IF;
    EXECUTE format('ALTER FUNCTION %I.idempotency_key_released() SET search_path = %I, pg_temp', s, s);
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('released_keys_key') AND NOT indisvalid) THEN
        DROP INDEX released_keys_key;
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS released_keys_key ON released_keys (owner, operation, idempotency_key, expired_at DESC);
